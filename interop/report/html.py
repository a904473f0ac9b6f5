"""A static HTML page: the client x server grid per transport and auth, with details."""

from __future__ import annotations

from html import escape
from typing import Any

from interop.jsonvalue import dumps_compact
from interop.report.document import rows_of

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1d1d1f}
table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:center}
.passed{background:#d4f7d4}.failed{background:#ffd6d6}
.unsupported{background:#fff3c4}.inapplicable,.not-run{background:#eee;color:#888}
td.value{text-align:left;font-family:monospace;font-size:.8em;max-width:40rem;overflow-wrap:anywhere}
details{margin:.4rem 0}code{font-size:.85em}
"""


def _key(combination: dict[str, Any]) -> str:
    """The combination's log folder name, also its anchor (with the suite)."""
    return "--".join(combination[k] for k in ("client", "server", "transport", "auth"))


def _cell(combination: dict[str, Any]) -> str:
    counts = combination["counts"]
    passed, total = counts["passed"], sum(counts.values())
    status = combination["status"]
    anchor = escape(f"{combination['suite']}-{_key(combination)}")
    text = status if status in ("inapplicable", "not-run") else f"{status} {passed}/{total}"
    return f'<td class="{status}"><a href="#{anchor}">{escape(text)}</a></td>'


def _value(value: Any, limit: int = 600) -> str:
    text = dumps_compact(value)
    return escape(text if len(text) <= limit else text[: limit - 3] + "...")


def _details(document: dict[str, Any], c: dict[str, Any]) -> list[str]:
    anchor = escape(f"{c['suite']}-{_key(c)}")
    parts = [
        f"<details id='{anchor}'><summary class='{c['status']}'>{anchor}: {c['status']}</summary>"
    ]
    if "reason" in c:
        parts.append(f"<p>{escape(c['reason'])}</p>")
    for error in c["errors"]:
        stage, kind, message = (escape(error[k]) for k in ("stage", "class", "message"))
        parts.append(f"<p><b>{stage}</b> {kind}: {message}</p>")
    failing = [r for r in rows_of(document, c) if r["status"] != "passed"]
    if failing:
        parts.append(
            "<table><tr><th>set</th><th>id</th><th>status</th><th>error</th>"
            "<th>expected</th><th>actual</th></tr>"
        )
        for r in failing:
            parts.append(
                f"<tr class='{r['status']}'><td>{escape(r['set'])}</td><td>{escape(r['id'])}</td>"
                f"<td>{r['status']}</td><td>{escape(r.get('error') or '')}</td>"
                f"<td class='value'>{_value(r.get('expected'))}</td>"
                f"<td class='value'>{_value(r.get('actual'))}</td></tr>"
            )
        parts.append("</table>")
    logs = escape(document.get("logDir", "logs"))
    parts.append(f"<p>Logs: <code>{logs}/{escape(_key(c))}/</code></p></details>")
    return parts


def _counts(counts: dict[str, int]) -> str:
    return " · ".join(f"{n} {status}" for status, n in counts.items())


def build_html(document: dict[str, Any]) -> bytes:
    """One grid per suite: a row per client -> server pair, a column per transport/auth."""
    combos = document["combinations"]
    summary = document["summary"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>AHP Interop Matrix</title>",
        f"<style>{_STYLE}</style></head><body><h1>AHP Interop Matrix</h1>",
        f"<p>Combinations: {escape(_counts(summary['combinations']))}<br>",
        f"Scenario rows: {escape(_counts(summary['rows']))}<br>",
        f"Profile: {escape(str(document.get('profile', '')))}; sets: ",
        escape(
            ", ".join(
                f"{s['suite']}/{s['name']} ({s['scenarios']})" for s in document.get("sets", [])
            )
        ),
        "</p>",
    ]
    for suite in sorted({c["suite"] for c in combos}):
        mine = [c for c in combos if c["suite"] == suite]
        columns = sorted(
            {(c["transport"], c["auth"]) for c in mine if c["status"] != "inapplicable"}
        )
        pairs = sorted({(c["client"], c["server"]) for c in mine})
        cells = {(c["client"], c["server"], c["transport"], c["auth"]): c for c in mine}
        parts.append(f"<h2>{escape(suite)}</h2><table><tr><th>client &rarr; server</th>")
        parts.extend(f"<th>{escape(t)}<br>{escape(a)}</th>" for t, a in columns)
        parts.append("</tr>")
        for client, server in pairs:
            parts.append(f"<tr><th>{escape(client)} &rarr; {escape(server)}</th>")
            for transport, auth in columns:
                found = cells.get((client, server, transport, auth))
                parts.append(_cell(found) if found else "<td></td>")
            parts.append("</tr>")
        parts.append("</table>")
        hidden = [c for c in mine if c["status"] == "inapplicable"]
        if hidden:
            reasons = sorted({c.get("reason", "") for c in hidden})
            parts.append(
                f"<p>{len(hidden)} inapplicable combinations (never run) are not shown: "
                f"{escape('; '.join(reasons))}.</p>"
            )
    parts.append("<h2>Details</h2>")
    for c in combos:
        if c["status"] != "inapplicable":
            parts.extend(_details(document, c))
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")
