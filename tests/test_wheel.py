"""Build the wheel, install it (not editable) into a fresh venv and render a report from it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def test_wheel_ships_templates_and_renders(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # offline when hatchling is installed; otherwise build fetches it into an isolated env
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-isolation"]
    res = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", *isolation, "--outdir", str(dist)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    wheel = next(dist.glob("mlflow_imbalance-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    assert "mlflow_imbalance/templates/report.html.j2" in names
    assert "mlflow_imbalance/templates/_style.css.j2" in names
    venv = tmp_path / "venv"
    # A fresh venv; the dependencies come from the test interpreter's site-packages, appended
    # after the venv's own (a plain path in a .pth: the editable install's finder there is not
    # activated), so mlflow_imbalance is imported from the wheel and nothing is downloaded.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    own = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(own, "zz_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    out = tmp_path / "r.html"
    code = textwrap.dedent(
        f"""
        import numpy as np, mlflow_imbalance as mi
        from mlflow_imbalance.report import template_dir
        print(mi.__file__)
        print(template_dir())
        from mlflow_imbalance.tracking.card import _template_env
        env = _template_env()
        print(env.loader.get_source(env, "run_card.html.j2")[1])
        rng = np.random.default_rng(0)
        y = rng.random(3000) < 0.1
        c = mi.RocCounts.from_scores(y, rng.normal(size=y.size) + 1.5 * y)
        mi.build_report({{"wheel run": c}}, prevalences=[1e-3], n_bootstrap=0,
                        output={str(out)!r})
        """
    )
    res = subprocess.run(
        [str(py), "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stderr[-3000:]
    module_file, tdir, card_template = res.stdout.strip().splitlines()[-3:]
    assert module_file.startswith(str(venv)), module_file
    assert tdir.startswith(str(venv)) and tdir.endswith("mlflow_imbalance/templates"), tdir
    # the run card (tracking/card.py) finds its template in the installed package too
    assert card_template.startswith(str(venv)), card_template
    assert card_template.endswith("mlflow_imbalance/templates/run_card.html.j2"), card_template
    html = out.read_text(encoding="utf-8")
    assert "wheel run" in html and 'id="verdict"' in html
    # self-contained: inline scripts only (the report's own and the inlined Vega bundle)
    assert html.count("<script") == 5 and "<script src" not in html
