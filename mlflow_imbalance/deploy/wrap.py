"""The decision model: the winning run's model with its threshold applied.

:func:`find_source_model` finds the model a run logged (MLflow 3 logged models, by source run);
:func:`build_decision_model` prepares what :func:`~mlflow_imbalance.deploy.register.
register_decision` logs: the code of :mod:`mlflow_imbalance.deploy.served`, its model config,
the inner model (for scikit-learn a ``FixedThresholdClassifier`` around the fitted estimator,
saved with the original's serialisation settings; otherwise the original model itself), a
signature whose params schema offers ``output="score"``, and the original's requirements.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: The models-from-code file logged as the decision model's code.
SERVED = Path(__file__).with_name("served.py")
#: Responses a scikit-learn classifier's score may come from.
SKLEARN_RESPONSES = {"predict_proba": "predict_proba[:, 1]", "decision_function": None}


@dataclass
class DecisionModel:
    """What to log: ``mlflow.pyfunc.log_model(python_model=SERVED, **kwargs)``."""

    kind: str
    response: str
    artifacts: dict[str, str]
    model_config: dict[str, Any]
    signature: Any
    pip_requirements: list[str] | None = None
    notes: list[str] = field(default_factory=list)


def find_source_model(client: Any, run: Any) -> str:
    """``models:/<model_id>`` of the one model the run logged.

    Raises:
        ValueError: none or several (the message asks for ``model_uri``).
    """
    run_id = run.info.run_id
    found = client.search_logged_models(
        experiment_ids=[run.info.experiment_id],
        filter_string=f"source_run_id = '{run_id}'",
    )
    models = list(found)
    if len(models) == 1:
        return f"models:/{models[0].model_id}"
    if not models:
        why = "logged no model (MLflow 3 logged models are found by their source run)"
    else:
        names = ", ".join(f"{m.name} (models:/{m.model_id})" for m in models[:5])
        why = f"logged {len(models)} models: {names}"
    raise ValueError(
        f"run {run_id} {why}; pass model_uri= (e.g. 'models:/<model_id>' or "
        f"'runs:/{run_id}/model') naming the model that produced the scores"
    )


def _check_response(response: Any, kind: str) -> str | None:
    if response is None:
        return None
    if not isinstance(response, str) or not response.strip():
        raise ValueError(f"response must be a non-empty string, got {response!r:.80}")
    if kind == "sklearn" and response not in SKLEARN_RESPONSES:
        raise ValueError(
            f"response must be 'predict_proba' (column 1) or 'decision_function' for a "
            f"scikit-learn model, got {response!r:.80}"
        )
    return response


def _requirements(model_uri: str) -> list[str] | None:
    import mlflow

    try:
        path = mlflow.pyfunc.get_model_dependencies(model_uri, format="pip")
    except Exception as exc:  # the model may carry none; MLflow then infers them
        logger.info("no requirements read from %s: %s", model_uri, exc)
        return None
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")] or None


def _signature(info: Any, kind: str) -> Any:
    from mlflow.models.signature import ModelSignature
    from mlflow.types.schema import ColSpec, ParamSchema, ParamSpec, Schema

    params = ParamSchema([ParamSpec("output", "string", "decision")])
    inputs = info.signature.inputs if info.signature is not None else None
    outputs = Schema([ColSpec("double")])  # 0/1 or scores: one numeric column
    return ModelSignature(inputs=inputs, outputs=outputs, params=params)


def build_decision_model(
    model_uri: str, threshold: float, response: str | None, workdir: Path
) -> DecisionModel:
    """Prepare the decision model of ``model_uri`` at ``threshold`` in ``workdir``.

    Raises:
        ValueError: the model cannot be read, or is a scikit-learn model without the response.
    """
    import mlflow

    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite score, got {threshold!r}")
    try:
        info = mlflow.models.get_model_info(model_uri)
    except Exception as exc:
        raise ValueError(
            f"model_uri {model_uri!r:.200} cannot be read as an MLflow model "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    flavors = dict(info.flavors or {})
    reqs = _requirements(model_uri)
    if "sklearn" in flavors:
        return _sklearn_model(
            model_uri, info, flavors["sklearn"], threshold, response, workdir, reqs
        )
    if "python_function" not in flavors:
        raise ValueError(f"model_uri {model_uri!r:.200} has no python_function flavour to wrap")
    response = _check_response(response, "pyfunc")
    out_schema = info.signature.outputs if info.signature is not None else None
    n_out = len(out_schema.inputs) if out_schema is not None else 1
    if response is None:
        response = "output[:, 1]" if n_out >= 2 else "output"
    column: Any = None
    if response.startswith("output[:, ") and response.endswith("]"):
        text = response.removeprefix("output[:, ").removesuffix("]").strip()
        column = int(text) if text.lstrip("-").isdigit() else text.strip("'\"")
    elif response != "output":
        raise ValueError(
            f"response must be 'output' (1-d output) or 'output[:, COLUMN]' for a "
            f"{sorted(flavors)} model, got {response!r:.80}"
        )
    config = {"threshold": threshold, "kind": "pyfunc", "response": response, "column": column}
    return DecisionModel(
        "pyfunc", response, {"inner": model_uri}, config, _signature(info, "pyfunc"), reqs
    )


def _sklearn_model(
    model_uri: str,
    info: Any,
    conf: dict[str, Any],
    threshold: float,
    response: str | None,
    workdir: Path,
    reqs: list[str] | None,
) -> DecisionModel:
    import mlflow.sklearn
    from sklearn.model_selection import FixedThresholdClassifier

    response = _check_response(response, "sklearn") or "predict_proba"
    est = mlflow.sklearn.load_model(model_uri)
    if not hasattr(est, response) or not hasattr(est, "classes_"):
        raise ValueError(
            f"model_uri {model_uri!r:.200} is a scikit-learn {type(est).__name__} without "
            f"{response}() or classes_: not a fitted classifier; pass response= or another model"
        )
    if len(est.classes_) != 2:
        raise ValueError(
            f"model_uri {model_uri!r:.200}: {type(est).__name__} has {len(est.classes_)} classes, "
            "not 2"
        )
    # sklearn's rule is score >= threshold (_threshold_scores_to_class_labels), as our counts'
    ftc = FixedThresholdClassifier(est, threshold=threshold, response_method=response)
    fmt = conf.get("serialization_format")
    trusted = conf.get("skops_trusted_types")
    inner = workdir / "inner"
    mlflow.sklearn.save_model(
        ftc,
        str(inner),
        serialization_format=fmt,
        skops_trusted_types=trusted,
        pip_requirements=reqs,
    )
    shown = SKLEARN_RESPONSES[response] or response
    config = {"threshold": threshold, "kind": "sklearn", "response": shown, "column": None}
    return DecisionModel(
        "sklearn", shown, {"inner": str(inner)}, config, _signature(info, "sklearn"), reqs
    )
