"""The package layout: layers import downwards only, no import circles, no giant modules.

Every ``import``/``from … import`` in the package's source is read with :mod:`ast`, including
imports inside functions (lazy imports are still dependencies), and checked against the layer
order documented in docs/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mlflow_imbalance"
ROOT = "mlflow_imbalance"

#: Layers, bottom first. A module may import its own layer and any layer below it.
LAYERS = (
    ("_version", "_csp", "_numbers"),
    ("core",),
    ("stats",),
    ("plots",),
    ("tracking",),
    ("synthetic",),
    ("deploy",),
    ("report",),
    ("integrations",),
)
#: Thin public re-export modules (the documented import paths). They sit on the layer of what
#: they re-export; nothing inside the package may import them.
FACADES = {
    "metrics": "core",
    "artifacts": "core",
    "uncertainty": "stats",
    "ranking": "stats",
    "evaluator": "tracking",
}
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Package modules imported by ``name`` (absolute and relative, anywhere in the file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                mod = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for t in targets:
            if t == ROOT or not t.startswith(ROOT + "."):
                continue
            # the longest prefix that is a module of the package
            parts = t.split(".")
            while parts and ".".join(parts) not in MODULES:
                parts.pop()
            if parts and ".".join(parts) != name:
                found.add(".".join(parts))
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int | None:
    """Index of the module's layer (facades count on the layer they re-export)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None  # the package root: it is the public entry point and may import anything
    top = parts[1]
    top = FACADES.get(top, top)
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_layout.py")


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


def test_imports_point_down_the_layers():
    upward = []
    for name, deps in GRAPH.items():
        mine = _layer(name)
        if mine is None:
            continue
        for dep in deps:
            theirs = _layer(dep)
            if theirs is None or theirs > mine:
                upward.append(f"{name} imports {dep}")
    assert not upward, "upward imports:\n" + "\n".join(sorted(upward))


def test_package_code_does_not_import_facades():
    bad = []
    for name, deps in GRAPH.items():
        if name == ROOT or name.split(".")[1] in FACADES:
            continue
        bad += [f"{name} imports {d}" for d in deps if d.split(".")[1] in FACADES]
    assert not bad, "import the defining module instead:\n" + "\n".join(sorted(bad))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A subpackage's ``__init__`` re-exporting its own modules is not a circle: drop the edges
    from a module to the ``__init__`` of a package that contains it."""
    return {
        v: {w for w in deps if not v.startswith(w + ".")} for v, deps in graph.items() if v != ROOT
    }


def test_no_import_circles():
    cycles = _cycles(_without_package_inits(GRAPH))
    assert not cycles, f"import circles: {cycles}"


def test_cycle_detector_finds_a_circle():
    # the checker itself must be able to fail
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_layer_check_flags_an_upward_import():
    assert _layer("mlflow_imbalance.core.counts") < _layer("mlflow_imbalance.report.build")
    assert _layer("mlflow_imbalance.uncertainty") == _layer("mlflow_imbalance.stats.bands")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines (limit {MAX_LINES}): split it by job"


def test_public_api_still_importable():
    import mlflow_imbalance as mi
    from mlflow_imbalance import metrics, ranking, synthetic, uncertainty
    from mlflow_imbalance.integrations import lightgbm, xgboost  # noqa: F401

    for name in (
        "RocCounts",
        "CountsAccumulator",
        "log_scores",
        "load_counts",
        "autolog",
        "build_report",
    ):
        assert callable(getattr(mi, name)), name
    assert callable(metrics.average_precision) and callable(uncertainty.rate_interval)
    assert callable(ranking.flip_points) and callable(synthetic.synthesize_positives)


def test_import_is_cheap():
    import subprocess
    import sys

    code = (
        "import sys, mlflow_imbalance as mi; mi.RocCounts; from mlflow_imbalance import metrics; "
        "heavy = [m for m in ('mlflow', 'matplotlib', 'scipy', 'jinja2') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_architecture_doc_matches_the_tree():
    """docs/architecture.md's diagram and layer table name every subpackage, in import order."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = doc.split("```", 2)[1]
    subpackages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    table_rows = [line for line in doc.splitlines() if line.startswith("| `")]
    table_order = [row.split("`")[1].rstrip("/").removesuffix(".py") for row in table_rows]
    for sub in subpackages:
        assert f"{sub}/" in diagram, f"{sub}/ missing from the data-flow diagram"
        assert sub in table_order, f"{sub}/ missing from the layer table"
    layer_order = [layer[0] for layer in LAYERS]
    assert [t for t in table_order if t in layer_order] == layer_order
