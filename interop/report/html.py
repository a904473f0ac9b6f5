"""A static HTML page: the client x server grid per transport and auth, with details."""

from __future__ import annotations

from html import escape
from typing import Any

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1d1d1f}
table{border-collapse:collapse;margin:1rem 0}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:center}
.passed{background:#d4f7d4}.failed{background:#ffd6d6}
.unsupported{background:#fff3c4}.inapplicable{background:#eee;color:#888}
details{margin:.4rem 0}code{font-size:.85em}
"""


def _key(combination: dict[str, Any]) -> str:
    """The combination's log folder name, also its anchor (with the suite)."""
    return "--".join(combination[k] for k in ("client", "server", "transport", "auth"))


def _cell(combination: dict[str, Any]) -> str:
    rows = combination["results"]
    passed = sum(r["status"] == "passed" for r in rows)
    status = combination["status"]
    anchor = escape(f"{combination['suite']}-{_key(combination)}")
    text = status if status == "inapplicable" else f"{status} {passed}/{len(rows)}"
    return f'<td class="{status}"><a href="#{anchor}">{escape(text)}</a></td>'


def _details(c: dict[str, Any]) -> list[str]:
    anchor = escape(f"{c['suite']}-{_key(c)}")
    parts = [
        f"<details id='{anchor}'><summary class='{c['status']}'>{anchor}: {c['status']}</summary>"
    ]
    for error in c["errors"]:
        stage, kind, message = (escape(error[k]) for k in ("stage", "class", "message"))
        parts.append(f"<p><b>{stage}</b> {kind}: {message}</p>")
    failing = [r for r in c["results"] if r["status"] != "passed"]
    if failing:
        parts.append("<table><tr><th>set</th><th>id</th><th>status</th><th>error</th></tr>")
        for r in failing:
            parts.append(
                f"<tr class='{r['status']}'><td>{escape(r['set'])}</td><td>{escape(r['id'])}</td>"
                f"<td>{r['status']}</td><td>{escape(r.get('error') or '')}</td></tr>"
            )
        parts.append("</table>")
    parts.append(f"<p>Logs: <code>logs/{escape(_key(c))}/</code></p></details>")
    return parts


def build_html(document: dict[str, Any]) -> bytes:
    combos = document["combinations"]
    clients = sorted({c["client"] for c in combos})
    servers = sorted({c["server"] for c in combos})
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>AHP Interop Matrix</title>",
        f"<style>{_STYLE}</style></head><body><h1>AHP Interop Matrix</h1>",
        f"<p>Combinations: {escape(str(document['summary']['combinations']))}<br>",
        f"Scenarios: {escape(str(document['summary']['scenarios']))}</p>",
    ]
    for suite in sorted({c["suite"] for c in combos}):
        for transport, auth in sorted(
            {(c["transport"], c["auth"]) for c in combos if c["suite"] == suite}
        ):
            parts.append(f"<h2>{escape(suite)}: {escape(transport)} / {escape(auth)}</h2><table>")
            parts.append(
                "<tr><th>client \\ server</th>"
                + "".join(f"<th>{escape(s)}</th>" for s in servers)
                + "</tr>"
            )
            for client in clients:
                cells = []
                for server in servers:
                    match = [
                        c
                        for c in combos
                        if (c["suite"], c["client"], c["server"], c["transport"], c["auth"])
                        == (suite, client, server, transport, auth)
                    ]
                    cells.append(_cell(match[0]) if match else "<td></td>")
                parts.append(f"<tr><th>{escape(client)}</th>{''.join(cells)}</tr>")
            parts.append("</table>")
    parts.append("<h2>Details</h2>")
    for c in combos:
        parts.extend(_details(c))
    parts.append("</body></html>\n")
    return "".join(parts).encode("utf-8")
