"""The Content-Security-Policy of every HTML page the package writes (report and run card).

Escaping is what keeps user strings inert; the policy is defence in depth: nothing but inline
scripts and styles and ``data:`` images may load, so even an injected tag could fetch nothing
and send nothing. Used as ``<meta http-equiv="Content-Security-Policy" content="...">`` in the
``<head>`` of ``templates/run_card.html.j2`` and ``templates/report.html.j2`` (a test checks
both carry exactly this string).
"""

from __future__ import annotations

__all__ = ["CONTENT_SECURITY_POLICY", "csp_meta_tag"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; font-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)


def csp_meta_tag() -> str:
    """The ``<meta http-equiv="Content-Security-Policy">`` element carrying the policy."""
    return f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
