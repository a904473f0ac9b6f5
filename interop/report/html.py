"""The HTML report: one self-contained static page (inline CSS and JS, nothing fetched).

What the page holds:

- a header: combination and row counts by status (overall and per suite), the
  revision, the run date (from `run`, the timings, when given), every adapter
  and every scenario set (suite, name, rows, sha256);
- per suite a client x server grid, each cell a badge per transport and auth
  mode with its status and passed/total; a badge opens its combination;
- a combination view rendered by the page's script from embedded JSON: errors,
  every failing row with its error, a structural diff of expected vs actual, the
  scenario row from its file, a re-run command, and the tail of each log;
- filters (status, language, suite, tag) with counts; the state lives in the
  URL fragment (`#suite=core&status=failed&combo=core/python->typescript/http/bearer`);
- the coverage by requirement when the report carries one.

Everything untrusted (ids, messages, logs) is escaped here or set as text by the
script; the embedded JSON escapes `<`, `>` and `&`. Passed rows are never
rendered one by one: they are counted from the digests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from interop import ROOT
from interop.coverage import charges_of
from interop.report.terminal import judging, rerun_command
from interop.results import rows_of
from interop.suites import DECLARATIONS

LOG_TAIL = 40  # lines of each log embedded per combination
LOG_LINE = 2000  # characters kept of one log line
ROW_ID_MARK = "__AHP_ROW_ID__"
_ORDER = (
    "passed",
    "failed",
    "flaky",
    "unsupported",
    "known-failing",
    "not-run",
    "inapplicable",
)
_RUN_DATE_KEYS = ("date", "runDate", "started", "startedAt", "start", "finished", "finishedAt")

_STYLE = """
:root{--ok:#1a7f37;--okb:#dafbe1;--bad:#cf222e;--badb:#ffebe9;--warn:#9a6700;--warnb:#fff8c5;
--mute:#6e7781;--muteb:#f0f2f4;--kf:#8250df;--kfb:#fbefff;--line:#d0d7de}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;
background:#fff;font-size:14px;line-height:1.4}
header,main{padding:0 1.5rem}
h1{font-size:1.5rem;margin:1rem 0 .3rem}h2{font-size:1.2rem;margin:1.4rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .4rem}
table{border-collapse:collapse;margin:.4rem 0}
td,th{border:1px solid var(--line);padding:.25rem .5rem;vertical-align:top;text-align:left}
th{background:#f6f8fa;font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2rem 0;background:#f6f8fa;
padding:.4rem;border-radius:4px;max-height:30rem;overflow:auto}
.meta td,.meta th{font-size:12px}
.n{font-variant-numeric:tabular-nums}
.passed{color:var(--ok)}.failed{color:var(--bad)}.unsupported{color:var(--warn)}
.known-failing{color:var(--kf)}.flaky{color:var(--kf);font-style:italic}.inapplicable,.not-run{color:var(--mute)}
.zero{color:#bbb}
.badge{display:inline-block;margin:2px;padding:2px 6px;border-radius:10px;border:1px solid;
text-decoration:none;font-size:12px;white-space:nowrap}
.badge.passed{background:var(--okb);border-color:#4ac26b}
.badge.failed{background:var(--badb);border-color:#ff8182;font-weight:600}
.badge.unsupported{background:var(--warnb);border-color:#d4a72c}
.badge.known-failing{background:var(--kfb);border-color:#c297ff}
.badge.inapplicable,.badge.not-run{background:var(--muteb);border-color:#d0d7de}
.badge.current{outline:2px solid #0969da}
.grid td.cell{min-width:9rem}
.grid th.client{white-space:nowrap}
.lang{color:var(--mute);font-weight:normal;font-size:11px}
.hidden{display:none!important}
#filters{position:sticky;top:0;background:#fffffff0;border-bottom:1px solid var(--line);
padding:.5rem 1.5rem;z-index:2;display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center}
#filters label{font-size:12px}#filters select{font-size:12px;max-width:16rem}
#shown{font-size:12px;color:var(--mute)}
#view{border:2px solid #0969da;border-radius:6px;padding:.2rem 1rem 1rem;margin:1rem 0}
.row{border:1px solid var(--line);border-left:4px solid var(--bad);border-radius:6px;
padding:.4rem .8rem;margin:.6rem 0}
.row h4{margin:.2rem 0;font-size:13px}
.diff td{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;max-width:36rem;
overflow-wrap:anywhere;white-space:pre-wrap}
tr.removed td.exp{background:var(--badb)}tr.added td.act{background:var(--okb)}
tr.changed td.exp{background:var(--badb)}tr.changed td.act{background:var(--okb)}
.kind{font-size:11px;color:var(--mute)}
.cmd{display:flex;gap:.4rem;align-items:flex-start}
.cmd code{flex:1;background:#f6f8fa;padding:.3rem;border-radius:4px;user-select:all;
overflow-wrap:anywhere}
button{font-size:12px}
.note{color:var(--mute)}
.warn{background:var(--warnb);padding:.4rem .8rem;border-radius:4px}
details>summary{cursor:pointer}
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var STATUSES = D.statuses, SETS = D.sets, COMBOS = D.combos;
  var PAGE = 50; // failing rows rendered at a time
  var KEYS = ["suite", "status", "lang", "tag", "combo"];
  var PRIORITY = ["failed", "flaky", "unsupported", "not-run", "known-failing", "passed"];
  var KIND = {removed: "expected only", added: "actual only", changed: "changed"};
  var has = function (o, k) { return Object.prototype.hasOwnProperty.call(o, k); };

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (kids || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  // -- state in the URL fragment ------------------------------------------------
  function enc(v) {
    return encodeURIComponent(v).replace(/%2F/g, "/").replace(/%3E/g, ">");
  }
  function readState() {
    var s = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (p) {
      var i = p.indexOf("=");
      if (i < 1) return;
      try {
        s[decodeURIComponent(p.slice(0, i))] = decodeURIComponent(p.slice(i + 1));
      } catch (e) { /* a malformed part is ignored */ }
    });
    return s;
  }
  function writeState(s) {
    var parts = [];
    KEYS.forEach(function (k) { if (s[k]) parts.push(k + "=" + enc(s[k])); });
    var h = parts.join("&");
    if (h === location.hash.replace(/^#/, "")) render();
    else location.hash = h;
  }

  // -- which combinations the filters keep -------------------------------------
  var byKey = {};
  COMBOS.forEach(function (c, i) { c.index = i; byKey[c.key] = c; });

  function taggedCounts(c, tag) {
    var counts = {}, total = 0;
    STATUSES.forEach(function (s) { counts[s] = 0; });
    Object.keys(c.n).forEach(function (si) {
      var idx = SETS[si].tags[tag];
      if (!idx) return;
      var bad = {};
      (c.rows[si] || []).forEach(function (p) { bad[p[0]] = STATUSES[p[1]]; });
      idx.forEach(function (i) {
        if (i >= c.n[si]) return;
        var st = bad[i] || "passed";
        counts[st] = (counts[st] || 0) + 1;
        total++;
      });
    });
    return {counts: counts, total: total};
  }

  // The combination as the filters see it ({status, counts}), or null when hidden.
  function view(c, s) {
    if (s.suite && c.suite !== s.suite) return null;
    if (s.lang && c.langs.indexOf(s.lang) < 0) return null;
    var status = c.status, counts = c.counts;
    if (s.tag) {
      if (c.status === "inapplicable" || c.status === "not-run") return null;
      var t = taggedCounts(c, s.tag);
      if (!t.total) return null;
      counts = t.counts;
      if (!c.errors.length) {
        status = "passed";
        for (var i = 0; i < PRIORITY.length; i++) {
          if (counts[PRIORITY[i]]) { status = PRIORITY[i]; break; }
        }
      }
    }
    if (s.status && status !== s.status) return null;
    return {status: status, counts: counts};
  }
  function total(counts) {
    var n = 0;
    Object.keys(counts).forEach(function (k) { n += counts[k]; });
    return n;
  }
  function matching(s) {
    return COMBOS.filter(function (c) { return view(c, s); }).length;
  }

  function fillSelect(key, values, s) {
    var sel = document.getElementById("f-" + key);
    var others = {};
    KEYS.forEach(function (k) { if (k !== key && k !== "combo") others[k] = s[k]; });
    sel.textContent = "";
    sel.appendChild(el("option", {value: "", text: "all (" + matching(others) + ")"}));
    var listed = values.slice();
    if (s[key] && listed.indexOf(s[key]) < 0) listed.push(s[key]);
    listed.forEach(function (v) {
      var o = Object.assign({}, others);
      o[key] = v;
      var n = matching(o);
      sel.appendChild(el("option", {value: v, text: v + " (" + n + ")", cls: n ? "" : "zero"}));
    });
    sel.value = s[key] || "";
  }

  function render() {
    var s = readState();
    fillSelect("suite", D.suites, s);
    fillSelect("status", STATUSES, s);
    fillSelect("lang", D.languages, s);
    fillSelect("tag", D.tags, s);
    var shown = 0, rows = {}, suites = {};
    COMBOS.forEach(function (c) {
      var b = document.getElementById("b" + c.index);
      var v = view(c, s);
      if (!b) return;
      if (!v) { b.className = "badge hidden " + c.status; return; }
      shown++;
      suites[c.suite] = true;
      Object.keys(v.counts).forEach(function (k) { rows[k] = (rows[k] || 0) + v.counts[k]; });
      b.className = "badge " + v.status + (s.combo === c.key ? " current" : "");
      var skipped = c.status === "inapplicable" || c.status === "not-run";
      b.querySelector(".n").textContent =
        skipped ? "\u2013" : (v.counts.passed || 0) + "/" + total(v.counts);
    });
    var filtered = s.status || s.lang || s.tag;
    document.querySelectorAll("section.suite").forEach(function (sec) {
      var name = sec.getAttribute("data-suite");
      var off = (s.suite && s.suite !== name) || (filtered && !suites[name]);
      sec.classList.toggle("hidden", !!off);
      sec.querySelectorAll("td.cell").forEach(function (td) {
        td.classList.toggle("empty", !td.querySelector(".badge:not(.hidden)"));
      });
    });
    var parts = STATUSES.filter(function (k) { return rows[k]; }).map(function (k) {
      return rows[k] + " " + k;
    });
    document.getElementById("shown").textContent =
      "showing " + shown + " of " + COMBOS.length + " combinations; their rows" +
      (s.tag ? " tagged " + s.tag : "") + ": " + (parts.join(", ") || "none");
    renderView(s);
  }

  // -- the structural diff ------------------------------------------------------
  function json(v) { return v === undefined ? "<absent>" : JSON.stringify(v); }
  function pretty(v) { return v === undefined ? "<absent>" : JSON.stringify(v, null, 2); }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  // Every path where expected (a) and actual (b) differ: [kind, path, expected, actual].
  function walk(path, a, b, out) {
    if (isObj(a) && isObj(b)) {
      var keys = Object.keys(a).concat(Object.keys(b).filter(function (k) { return !has(a, k); }));
      keys.sort().forEach(function (k) {
        var plain = /^[A-Za-z_$][\w$]*$/.test(k);
        var p = plain ? path + "." + k : path + "[" + JSON.stringify(k) + "]";
        if (has(a, k) && has(b, k)) walk(p, a[k], b[k], out);
        else if (has(a, k)) out.push(["removed", p, a[k], undefined]);
        else out.push(["added", p, undefined, b[k]]);
      });
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (var i = 0; i < Math.max(a.length, b.length); i++) {
        var q = path + "[" + i + "]";
        if (i >= b.length) out.push(["removed", q, a[i], undefined]);
        else if (i >= a.length) out.push(["added", q, undefined, b[i]]);
        else walk(q, a[i], b[i], out);
      }
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(["changed", path, a, b]);
  }
  function diffRows(rows) {
    var t = el("table", {cls: "diff"}, [el("tr", {}, [
      el("th", {text: "path"}), el("th", {text: "expected"}), el("th", {text: "actual"})])]);
    rows.forEach(function (d) {
      t.appendChild(el("tr", {cls: d[0]}, [
        el("td", {}, [el("code", {text: d[1]}), el("div", {cls: "kind", text: KIND[d[0]]})]),
        el("td", {cls: "exp", text: json(d[2])}),
        el("td", {cls: "act", text: json(d[3])})]));
    });
    return t;
  }
  // the asserted differences first; those of keys the row does not assert apart
  function diffTable(expected, actual, hasActual, unasserted) {
    if (!hasActual) {
      return el("p", {cls: "note", text: "No actual: the row produced no result (see the error)."});
    }
    var out = [];
    walk("$", expected, actual, out);
    var top = function (d) { return d[1].replace(/^\$\.?/, "").split(/[.\[]/)[0]; };
    var skip = unasserted || [];
    var judged = out.filter(function (d) { return skip.indexOf(top(d)) < 0; });
    var apart = out.filter(function (d) { return skip.indexOf(top(d)) >= 0; });
    var kids = [];
    kids.push(judged.length ? diffRows(judged)
      : el("p", {cls: "note", text: "The asserted keys are equal (see the error)."}));
    if (apart.length) {
      kids.push(el("details", {}, [el("summary", {
        text: apart.length + " difference(s) in keys this row does not assert for this client " +
          "(not judged): " + skip.join(", ")}), diffRows(apart)]));
    }
    return el("div", {}, kids);
  }
  function rulesBlock(r) {
    return el("ul", {cls: "rules"}, r.rules.map(function (x) {
      var reqs = x.requirements.length ? x.requirements.map(function (q) {
        return q.id + " (" + q.at + ")"; }).join(", ") : "a duty of the contract (no requirement)";
      var judged = x.judges === "either" ? "leaves it undetermined, client or server"
        : "judges the " + x.judges;
      return el("li", {text: "rule " + x.rule + " " + judged + ": " + reqs +
        " — " + x.basis});
    }));
  }

  // -- the combination view -----------------------------------------------------
  function quoteId(id) { return "'" + String(id).replace(/'/g, "'\\''") + "'"; }
  function copyButton(text) {
    var b = el("button", {type: "button", text: "copy"});
    b.addEventListener("click", function () {
      if (!navigator.clipboard) return;
      navigator.clipboard.writeText(text).then(function () { b.textContent = "copied"; },
        function () { b.textContent = "select the text to copy"; });
    });
    return b;
  }
  function scenarioBlock(r) {
    var set = SETS[r.s], sc = D.scenarios[r.s + "/" + r.id];
    if (set.missing) return el("p", {cls: "note", text: "Scenario row not shown: " + set.missing});
    if (!sc || !sc.row) {
      return el("p", {cls: "note", text: "Row " + r.id + " is not in " + set.file});
    }
    var core = sc.kind === "core";
    var kids = [el("summary", {
      text: core ? "scenario: canonical request and scripted response" : "scenario row"})];
    if (core) {
      kids.push(el("h4", {text: "request"}), el("pre", {text: pretty(sc.row.request)}),
        el("h4", {text: "response"}), el("pre", {text: pretty(sc.row.response)}));
      if (sc.row.tags) kids.push(el("p", {text: "tags: " + sc.row.tags.join(", ")}));
    } else {
      kids.push(el("pre", {text: pretty(sc.row)}));
    }
    return el("details", {cls: "scenario"}, kids);
  }
  function rowBlock(c, r) {
    var set = SETS[r.s], sc = D.scenarios[r.s + "/" + r.id] || {};
    var hasActual = has(r, "actual") && r.actual !== null;
    var template = c.rerun[r.s];
    var cmd = template ? template.split("'" + D.mark + "'").join(quoteId(r.id)) : "";
    var head = [el("span", {cls: r.status, text: r.status}), " ",
      el("code", {text: set.name + "/" + r.id})];
    if (r.adapterStatus) head.push(el("span", {cls: "kind", text: " adapter: " + r.adapterStatus}));
    var kids = [el("h4", {}, head)];
    if (r.error) kids.push(el("pre", {cls: "error", text: r.error}));
    if (r.rules) kids.push(rulesBlock(r));
    kids.push(diffTable(sc.expected, r.actual, hasActual, r.unasserted));
    if (r.bundle) {
      cmd = "sh " + r.bundle + "/rerun.sh";
      kids.push(el("p", {}, [el("a", {href: r.bundle, text: "repro bundle"}),
        el("span", {cls: "kind", text: " (row, charges, capture, logs, rerun.sh)"})]));
    }
    if (cmd) {
      kids.push(el("div", {cls: "cmd"}, [el("code", {cls: "rerun", text: cmd}), copyButton(cmd)]));
    }
    kids.push(scenarioBlock(r));
    kids.push(el("details", {}, [el("summary", {text: "expected and actual, whole"}),
      el("h4", {text: "expected"}), el("pre", {text: pretty(sc.expected)}),
      el("h4", {text: "actual"}), el("pre", {text: hasActual ? pretty(r.actual) : "<absent>"})]));
    var attrs = {cls: "row", "data-status": r.status, "data-row": set.name + "/" + r.id};
    return el("article", attrs, kids);
  }
  function countsText(counts) {
    return STATUSES.filter(function (k) { return counts[k]; }).map(function (k) {
      return counts[k] + " " + k;
    }).join(", ");
  }
  function renderView(s) {
    var box = document.getElementById("view");
    box.textContent = "";
    box.classList.toggle("hidden", !s.combo);
    if (!s.combo) return;
    var c = byKey[s.combo];
    var close = el("a", {href: "#", text: "close"});
    close.addEventListener("click", function (e) {
      e.preventDefault();
      var t = readState();
      delete t.combo;
      writeState(t);
    });
    if (!c) {
      box.appendChild(el("p", {}, ["No combination " + s.combo + " in this report. ", close]));
      return;
    }
    box.appendChild(el("h2", {}, [
      c.suite + ": " + c.client + " \u2192 " + c.server + " [" + c.transport + "/" + c.auth + "] ",
      el("span", {cls: "badge " + c.status, text: c.status}), " ", close]));
    box.appendChild(el("p", {text: "client " + c.client + " (" + c.langs[0] + "), server " +
      c.server + " (" + c.langs[1] + "); rows: " + (countsText(c.counts) || "none")}));
    if (c.reason) box.appendChild(el("p", {cls: "warn", text: c.reason}));
    if (c.errors.length) {
      box.appendChild(el("h3", {text: "Combination errors (each fails every row)"}));
      var t = el("table", {cls: "errors"}, [el("tr", {}, [
        el("th", {text: "stage"}), el("th", {text: "class"}), el("th", {text: "message"})])]);
      c.errors.forEach(function (e) {
        t.appendChild(el("tr", {}, [el("td", {text: e.stage}), el("td", {text: e["class"]}),
          el("td", {}, [el("pre", {text: e.message})])]));
      });
      box.appendChild(t);
    }
    var rows = c.failing.filter(function (r) {
      if (!s.tag) return true;
      var tagged = SETS[r.s].tags[s.tag];
      return tagged && tagged.indexOf(r.i) >= 0;
    });
    var hidden = c.failing.length - rows.length;
    if (c.failing.length) {
      box.appendChild(el("h3", {text: "Rows that did not pass: " + rows.length +
        (hidden ? " (" + hidden + " more hidden by the tag filter)" : "")}));
    }
    var list = el("div", {cls: "rows"}), more = el("button", {type: "button"}), done = 0;
    box.appendChild(list);
    function page() {
      rows.slice(done, done + PAGE).forEach(function (r) { list.appendChild(rowBlock(c, r)); });
      done = Math.min(rows.length, done + PAGE);
      var left = rows.length - done;
      more.textContent = "show " + Math.min(PAGE, left) + " more of " + left;
      more.classList.toggle("hidden", left <= 0);
    }
    more.addEventListener("click", page);
    page();
    box.appendChild(more);
    if (c.logs.length) {
      box.appendChild(el("h3", {text: "Logs (redacted; the last lines of each)"}));
      c.logs.forEach(function (p) {
        box.appendChild(el("details", {cls: "log", open: ""}, [
          el("summary", {}, [el("code", {text: D.logDir + "/" + p})]),
          el("pre", {text: D.logs[p] || "(empty)"})]));
      });
    } else if (D.logsNote) {
      box.appendChild(el("p", {cls: "note", text: D.logsNote}));
    }
  }

  // -- wiring -------------------------------------------------------------------
  ["suite", "status", "lang", "tag"].forEach(function (k) {
    document.getElementById("f-" + k).addEventListener("change", function (e) {
      var s = readState();
      s[k] = e.target.value;
      writeState(s);
    });
  });
  document.getElementById("f-reset").addEventListener("click", function (e) {
    e.preventDefault();
    writeState({});
  });
  document.querySelectorAll("a.badge").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      var s = readState();
      s.combo = COMBOS[+a.id.slice(1)].key;
      writeState(s);
      document.getElementById("view").scrollIntoView();
    });
  });
  window.addEventListener("hashchange", render);
  render();
  document.documentElement.setAttribute("data-ready", "1");
})();
"""


def combo_key(combination: dict[str, Any]) -> str:
    """The combination's name in the URL fragment: `suite/client->server/transport/auth`."""
    c = combination
    return f"{c['suite']}/{c['client']}->{c['server']}/{c['transport']}/{c['auth']}"


def _folder(combination: dict[str, Any]) -> str:
    """The combination's log folder name."""
    return "--".join(str(combination[k]) for k in ("client", "server", "transport", "auth"))


def _statuses(document: dict[str, Any]) -> list[str]:
    seen = {str(k) for k in document.get("summary", {}).get("combinations", {})}
    seen |= {str(c.get("status")) for c in document.get("combinations", [])}
    for c in document.get("combinations", []):
        seen |= {str(k) for k in c.get("counts", {})}
    return [s for s in _ORDER if s in seen] + sorted(seen - set(_ORDER))


def _json_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _read_set(root: Path, file: str) -> tuple[dict[str, Any] | None, str]:
    """A scenario file's rows by id, or None and why not."""
    if not file:
        return None, "the set names no file"
    path = Path(file) if Path(file).is_absolute() else root / file
    if path.suffix != ".json":
        return None, f"{file} is not a scenario file (the set is built in code)"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return (
            None,
            f"the scenario file {file} is not found (a file outside the repository"
            " is named by its name only)",
        )
    except (OSError, ValueError) as error:
        return None, f"the scenario file {file} is unreadable: {error}"
    rows = data.get("scenarios") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        return None, f"{file} has no scenarios list"
    return {str(r["id"]): r for r in rows if isinstance(r, dict) and "id" in r}, ""


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as error:
        return f"(unreadable: {error})"
    kept = [line if len(line) <= LOG_LINE else line[:LOG_LINE] + " [...]" for line in lines]
    head = [f"[... {len(lines) - LOG_TAIL} earlier lines]"] if len(lines) > LOG_TAIL else []
    return "\n".join(head + kept[-LOG_TAIL:])


def _log_files(
    logs_dir: Path, combination: dict[str, Any], set_names: set[str], texts: dict[str, str]
) -> list[str]:
    """The combination's log files (relative to logs_dir), their tails put in `texts`."""
    folder = logs_dir / _folder(combination)
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    names = {combination["suite"], *set_names}
    mine = [p for p in files if p.stem.partition("-")[2] in names]
    chosen = mine or files
    server = (
        logs_dir
        / "servers"
        / (f"{combination['server']}--{combination['transport']}--{combination['auth']}.log")
    )
    if server.is_file():
        chosen.append(server)
    out: list[str] = []
    for path in chosen:
        relative = path.relative_to(logs_dir).as_posix()
        if relative not in texts:
            texts[relative] = _tail(path)
        out.append(relative)
    return out


def _counts_cells(counts: dict[str, int], statuses: list[str]) -> str:
    cells = []
    for status in statuses:
        n = int(counts.get(status, 0))
        cls = status if n else "zero"
        cells.append(f"<td class='n {escape(cls)}'>{n}</td>")
    return "".join(cells)


def _header(document: dict[str, Any], statuses: list[str], run: dict[str, Any] | None) -> str:
    summary = document.get("summary", {})
    parts = ["<header><h1>AHP Interop Matrix: conformance report</h1><p>"]
    facts = []
    if document.get("revision"):
        facts.append(f"revision <code>{escape(str(document['revision']))}</code>")
    if run:
        for key in _RUN_DATE_KEYS:
            if run.get(key):
                facts.append(f"run <span class='run-date'>{escape(str(run[key]))}</span>")
                break
        if isinstance(run.get("totalSeconds"), int | float):
            facts.append(f"took {float(run['totalSeconds']):.0f}s")
    if document.get("profile"):
        facts.append(f"profile {escape(str(document['profile']))}")
    facts.append(f"report version {escape(str(document.get('reportVersion', '?')))}")
    parts.append(" · ".join(facts) + "</p>")
    if document.get("incomplete"):
        parts.append("<p class='warn'>This run was interrupted: what never ran is not-run.</p>")
    heads = "".join(f"<th class='{escape(s)}'>{escape(s)}</th>" for s in statuses)
    parts.append(
        "<table class='meta counts'><tr><th rowspan='2'>suite</th>"
        f"<th colspan='{len(statuses)}'>combinations</th><th colspan='{len(statuses)}'>rows</th>"
        f"</tr><tr>{heads}{heads}</tr>"
    )
    lines = [("all", summary)]
    lines += [(name, value) for name, value in summary.get("suites", {}).items()]
    for name, value in lines:
        parts.append(
            f"<tr><th>{escape(str(name))}</th>"
            f"{_counts_cells(value.get('combinations', {}), statuses)}"
            f"{_counts_cells(value.get('rows', {}), statuses)}</tr>"
        )
    parts.append("</table>")
    adapters = document.get("adapters") or {}
    if adapters:
        parts.append(
            "<table class='meta adapters'><tr><th>adapter</th><th>language</th><th>version</th>"
            "<th>blind</th><th>other</th></tr>"
        )
        for name, facts_of in sorted(adapters.items()):
            info = facts_of if isinstance(facts_of, dict) else {}
            other = {k: v for k, v in info.items() if k not in ("language", "version", "blind")}
            blind = info.get("blind")
            parts.append(
                f"<tr><th>{escape(str(name))}</th><td>{escape(str(info.get('language', '')))}</td>"
                f"<td>{escape(str(info.get('version', '')))}</td>"
                f"<td>{'' if blind is None else escape(str(blind).lower())}</td>"
                f"<td class='mono'>{escape(json.dumps(other, sort_keys=True)) if other else ''}"
                "</td></tr>"
            )
        parts.append("</table>")
    sets = document.get("sets") or []
    if sets:
        parts.append(
            "<details><summary>Scenario sets</summary><table class='meta sets'><tr><th>suite</th>"
            "<th>set</th><th>rows</th><th>file</th><th>sha256</th></tr>"
        )
        for s in sets:
            parts.append(
                f"<tr><td>{escape(str(s.get('suite', '')))}</td>"
                f"<td>{escape(str(s.get('name', '')))}</td>"
                f"<td class='n'>{len(s.get('rows', []))}</td>"
                f"<td><code>{escape(str(s.get('file', '')))}</code></td>"
                f"<td><code>{escape(str(s.get('sha256', '')))}</code></td></tr>"
            )
        parts.append("</table></details>")
    parts.append("</header>")
    return "".join(parts)


def _grid(suite: str, combos: list[tuple[int, dict[str, Any]]], adapters: dict[str, Any]) -> str:
    clients = sorted({c["client"] for _, c in combos})
    servers = sorted({c["server"] for _, c in combos})

    def lang(name: str) -> str:
        info = adapters.get(name)
        language = info.get("language") if isinstance(info, dict) else None
        return f" <span class='lang'>{escape(str(language))}</span>" if language else ""

    cells: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    for index, c in combos:
        cells.setdefault((c["client"], c["server"]), []).append((index, c))
    parts = [
        f"<section class='suite' data-suite='{escape(suite)}'><h2>{escape(suite)}</h2>",
        "<table class='grid'><tr><th>client \u2193 server \u2192</th>",
    ]
    parts += [f"<th>{escape(s)}{lang(s)}</th>" for s in servers]
    parts.append("</tr>")
    for client in clients:
        parts.append(f"<tr><th class='client'>{escape(client)}{lang(client)}</th>")
        for server in servers:
            pair = escape(f"{client}->{server}")
            parts.append(f"<td class='cell' data-pair='{pair}'>")
            for index, c in sorted(
                cells.get((client, server), []), key=lambda x: _badge_order(x[1])
            ):
                status = str(c["status"])
                counts = c.get("counts", {})
                skipped = status in ("inapplicable", "not-run")
                text = "\u2013" if skipped else f"{counts.get('passed', 0)}/{sum(counts.values())}"
                title = f"{status}: {c.get('reason', '')}" if c.get("reason") else status
                href = "#combo=" + quote(combo_key(c), safe="/->")
                parts.append(
                    f"<a class='badge {escape(status)}' id='b{index}' href='{escape(href)}' "
                    f"title='{escape(title)}'>{escape(c['transport'])}/{escape(c['auth'])} "
                    f"<span class='n'>{text}</span></a>"
                )
            parts.append("</td>")
        parts.append("</tr>")
    parts.append("</table></section>")
    return "".join(parts)


def _badge_order(c: dict[str, Any]) -> tuple[int, str, str]:
    return (1 if c["status"] == "inapplicable" else 0, c["transport"], c["auth"])


def _coverage(coverage: Any) -> str:
    """A table per adapter and role; MUST failures apart from SHOULD and MAY ones."""
    if not isinstance(coverage, dict) or not isinstance(coverage.get("byAdapter"), dict):
        return ""
    requirements = {
        str(r["id"]): r
        for r in coverage.get("requirements") or []
        if isinstance(r, dict) and "id" in r
    }
    parts = ["<section id='coverage'><h2>Coverage by requirement</h2>"]
    failures: dict[str, list[str]] = {"MUST": [], "other": []}
    tables = [
        _coverage_table(adapter, role, entry, requirements, failures)
        for adapter, role, entry in _judged_roles(coverage["byAdapter"])
    ]
    parts.append("<h3>MUST failures</h3>")
    parts.append(
        f"<ul class='must-failures'>{''.join(failures['MUST'])}</ul>"
        if failures["MUST"]
        else "<p class='note'>none</p>"
    )
    parts.append("<h3>SHOULD and MAY failures</h3>")
    parts.append(
        f"<ul class='other-failures'>{''.join(failures['other'])}</ul>"
        if failures["other"]
        else "<p class='note'>none</p>"
    )
    parts.append(_profiles(coverage))
    parts.append(_blame(coverage))
    parts.extend(tables)
    notes = coverage.get("notes")
    if isinstance(notes, list) and notes:
        parts.append("<ul class='note'>" + "".join(f"<li>{escape(str(n))}</li>" for n in notes))
        parts.append("</ul>")
    parts.append("</section>")
    return "".join(parts)


def _judged_roles(by_adapter: dict[Any, Any]) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    """(adapter, role, its entry) for each adapter (sorted) and role (client, server)
    whose entry is an object with its requirements' verdicts an object (or none)."""
    for adapter, roles in sorted(by_adapter.items()):
        if not isinstance(roles, dict):
            continue
        for role in ("client", "server"):
            entry = roles.get(role)
            if not isinstance(entry, dict):
                continue
            if not isinstance(entry.get("requirements") or {}, dict):
                continue
            yield adapter, role, entry


def _coverage_table(
    adapter: Any,
    role: str,
    entry: dict[str, Any],
    requirements: dict[str, Any],
    failures: dict[str, list[str]],
) -> str:
    """One adapter's table in one role: each requirement judged (level, status, title,
    where stated), a tally in its summary, and its features' statuses folded apart;
    each failed requirement listed in `failures` (MUST, or other)."""
    judged = entry.get("requirements") or {}
    rows = []
    tally: dict[str, int] = {}
    for rid, status in sorted(judged.items()):
        info = requirements.get(str(rid), {})
        level = str(info.get("level", ""))
        title = str(info.get("title", ""))
        tally[str(status)] = tally.get(str(status), 0) + 1
        if status == "failed":
            where = "MUST" if level.upper().startswith("MUST") else "other"
            failures[where].append(
                f"<li><b>{escape(str(adapter))}</b> as {role}: <code>{escape(str(rid))}"
                f"</code> ({escape(level or '?')}) {escape(title)}</li>"
            )
        rows.append(
            f"<tr><td><code>{escape(str(rid))}</code></td><td>{escape(level)}</td>"
            f"<td class='{escape(str(status))}'>{escape(str(status))}</td>"
            f"<td>{escape(title)}</td><td><code>{escape(_stated(info))}</code></td></tr>"
        )
    feature_rows = _feature_rows(entry.get("features") or {})
    summary = ", ".join(f"{n} {escape(k)}" for k, n in sorted(tally.items()))
    return (
        f"<details class='coverage-table'><summary><b>{escape(str(adapter))}</b> as {role}"
        f": {summary or 'nothing judged'}</summary>"
        "<table><tr><th>requirement</th><th>level</th><th>status</th><th>title</th>"
        "<th>stated in</th></tr>"
        + "".join(rows)
        + "</table>"
        + (
            "<details><summary>features</summary><table><tr><th>feature</th>"
            "<th>status</th></tr>" + "".join(feature_rows) + "</table></details>"
            if feature_rows
            else ""
        )
        + "</details>"
    )


def _feature_rows(features: Any) -> list[str]:
    """A row per feature (sorted) and its status; none when `features` is no object."""
    if not isinstance(features, dict):
        return []
    return [
        f"<tr><td><code>{escape(str(f))}</code></td>"
        f"<td class='{escape(str(st))}'>{escape(str(st))}</td></tr>"
        for f, st in sorted(features.items())
    ]


def _stated(info: dict[str, Any]) -> str:
    """Where a requirement is stated: the spec document and anchor of a canonical one,
    what one of ours (IMX-) refines."""
    if info.get("document"):
        return f"{info['document']}#{info.get('anchor', '')}"
    refines = info.get("refines")
    if isinstance(refines, dict):
        return f"refines {refines.get('document', '')} {refines.get('section', '')}".strip()
    return f"refines {refines}" if refines else ""


_CLAIM_CLASS = {"met": "passed", "failed": "failed", "untested": "not-run"}


def _profiles(coverage: dict[str, Any]) -> str:
    """Each canonical conformance profile's claim per adapter and role (met, failed or
    untested; docs/coverage.md), one row per adapter and role."""
    profiles = coverage.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        return ""
    names = sorted(str(p) for p, entry in profiles.items() if isinstance(entry, dict))
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for pid in names:
        verdicts = profiles[pid].get("verdicts")
        for adapter, by_role in verdicts.items() if isinstance(verdicts, dict) else []:
            for role, verdict in by_role.items() if isinstance(by_role, dict) else []:
                cells.setdefault((str(adapter), str(role)), {})[pid] = str(verdict)
    head = "".join(
        f"<th title='{escape(', '.join(str(r) for r in profiles[p].get('requirements') or []))}'>"
        f"{escape(p)}</th>"
        for p in names
    )
    body = []
    for (adapter, role), row in sorted(cells.items()):
        tds = "".join(
            f"<td class='{_CLAIM_CLASS.get(row.get(p, ''), '')}'>{escape(row.get(p, '-'))}</td>"
            for p in names
        )
        body.append(f"<tr><td><b>{escape(adapter)}</b></td><td>{escape(role)}</td>{tds}</tr>")
    return (
        "<h3>Conformance profiles</h3><table class='profiles'><tr><th>adapter</th>"
        f"<th>role</th>{head}</tr>{''.join(body)}</table>"
    )


def _blame(coverage: dict[str, Any]) -> str:
    """Whom each failed row was charged to, by the rule that judged it (docs/blame.md):
    failures charged to a side, then those the evidence could not place."""
    charges = [c for c in coverage.get("charges") or [] if isinstance(c, dict)]
    if not charges:
        return ""
    placed = [c for c in charges if c.get("judges") in ("client", "server")]
    unplaced = [c for c in charges if c.get("judges") == "either"]

    def item(c: dict[str, Any]) -> str:
        reqs = ", ".join(str(r) for r in c.get("requirements") or []) or "a contract duty"
        who = ", ".join(str(a) for a in c.get("adapters") or [])
        return (
            f"<li><code>{escape(str(c.get('suite')))}/{escape(str(c.get('set')))}/"
            f"{escape(str(c.get('combination')))}/{escape(str(c.get('row')))}</code>: "
            f"<b>{escape(str(c.get('rule')))}</b> {escape(judging(c.get('judges'), who))}: "
            f"{escape(reqs)}; "
            f"<span class='note'>{escape(str(c.get('basis')))}</span></li>"
        )

    limit = 200
    parts = ["<h3>Whom each failure is charged to</h3>"]
    for title, group in (("charged to one side", placed), ("undetermined", unplaced)):
        if not group:
            continue
        shown_items = "".join(item(c) for c in group[:limit])
        more = f"<li>… and {len(group) - limit} more</li>" if len(group) > limit else ""
        parts.append(
            f"<details class='blame'><summary>{len(group)} {title}</summary>"
            f"<ul>{shown_items}{more}</ul></details>"
        )
    return "".join(parts)


def _rules_of(
    document: dict[str, Any], combination: dict[str, Any], row: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rules coverage charged a row with (docs/blame.md), each with the side it
    judges and its requirements' documents and anchors."""
    coverage = document.get("coverage")
    listed = coverage.get("requirements") if isinstance(coverage, dict) else None
    facts = {
        str(r.get("id")): r
        for r in (listed if isinstance(listed, list) else [])
        if isinstance(r, dict)
    }
    found = []
    for charge in charges_of(document, combination, row["set"], row["id"]):
        found.append(
            {
                "rule": charge.get("rule"),
                "judges": charge.get("judges"),
                "basis": charge.get("basis"),
                "requirements": [
                    {
                        "id": rid,
                        "at": f"{facts.get(rid, {}).get('document', '')}#"
                        f"{facts.get(rid, {}).get('anchor', rid)}",
                    }
                    for rid in charge.get("requirements") or []
                ],
            }
        )
    return found


@dataclass
class _Page:
    """What the page's data is built from, and what it gathers once over every
    combination: the report, each status's code, the report's sets with their index
    by (suite, name), each row's position in its set by suite and (set, id), each
    set's rows as its file holds them (None when unreadable), the logs folder; each
    failing row's scenario once (`scenarios`, by `set/id`) and each log's tail once
    (`logs`, by path relative to the logs folder)."""

    document: dict[str, Any]
    code: dict[str, int]
    sets: list[dict[str, Any]]
    index: dict[tuple[str, str], int]
    places: dict[str, dict[tuple[str, str], int]]
    loaded: list[dict[str, Any] | None]
    logs_dir: Path | None
    scenarios: dict[str, Any] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)

    def language(self, name: str) -> str:
        """An adapter's language, as the report names it ('' when it does not)."""
        info = (self.document.get("adapters") or {}).get(name)
        return str(info.get("language", "")) if isinstance(info, dict) else ""


def _data(
    document: dict[str, Any], statuses: list[str], root: Path, logs_dir: Path | None
) -> dict[str, Any]:
    """What the page's script needs: sets with tag indexes, combinations, failing rows."""
    sets = document.get("sets") or []
    set_data, loaded, tags = _set_data(sets, root)
    page = _Page(
        document,
        {s: i for i, s in enumerate(statuses)},
        sets,
        {(s["suite"], s["name"]): i for i, s in enumerate(sets)},
        _places(sets),
        loaded,
        logs_dir,
    )
    combos = [_combo_data(page, c) for c in document.get("combinations", [])]
    harness = logs_dir / "harness.log" if logs_dir else None
    return {
        "statuses": statuses,
        "suites": list(dict.fromkeys([*document.get("suites", []), *(c["suite"] for c in combos)])),
        "languages": sorted({lang for c in combos for lang in c["langs"] if lang}),
        "tags": sorted(tags),
        "sets": set_data,
        "combos": combos,
        "scenarios": page.scenarios,
        "logs": page.logs,
        "logDir": logs_dir.name if logs_dir else str(document.get("logDir", "logs")),
        "logsNote": "" if logs_dir else "No logs embedded (the page was built without them).",
        "harnessLog": _tail(harness) if harness and harness.is_file() else "",
        "mark": ROW_ID_MARK,
    }


def _set_data(
    sets: list[dict[str, Any]], root: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any] | None], set[str]]:
    """Each set for the script (suite, name, file, its rows' positions by tag, why its
    file is missing), each set's rows as its file holds them (each file read once),
    and every tag."""
    files: dict[str, tuple[dict[str, Any] | None, str]] = {}
    set_data: list[dict[str, Any]] = []
    loaded: list[dict[str, Any] | None] = []
    tags: set[str] = set()
    for s in sets:
        file = str(s.get("file", ""))
        if file not in files:
            files[file] = _read_set(root, file)
        rows, why = files[file]
        loaded.append(rows)
        by_tag: dict[str, list[int]] = {}
        for i, row in enumerate(s.get("rows", [])):
            raw = rows.get(str(row["id"])) if rows else None
            for tag in raw.get("tags", []) if isinstance(raw, dict) else []:
                if isinstance(tag, str):
                    by_tag.setdefault(tag, []).append(i)
        tags |= set(by_tag)
        entry = {"suite": s["suite"], "name": s["name"], "file": file, "tags": by_tag}
        if rows is None:
            entry["missing"] = why
        set_data.append(entry)
    return set_data, loaded, tags


def _places(sets: list[dict[str, Any]]) -> dict[str, dict[tuple[str, str], int]]:
    """Each row's position in its set, by suite and (set name, row id)."""
    places: dict[str, dict[tuple[str, str], int]] = {}
    for s in sets:
        mine = places.setdefault(s["suite"], {})
        for i, row in enumerate(s.get("rows", [])):
            mine[(s["name"], str(row["id"]))] = i
    return places


def _combo_data(page: _Page, c: dict[str, Any]) -> dict[str, Any]:
    """One combination for the script: its axes, status, errors and counts, its sets'
    row counts (`n`, by set index), its failing rows (`rows`: position and status code
    by set index; `failing`: each whole), a re-run command per set and its logs."""
    suite = c["suite"]
    n: dict[str, int] = {}
    for set_name, result in (c.get("results") or {}).items():
        if (suite, set_name) in page.index:
            n[str(page.index[(suite, set_name)])] = len(result.get("digests", []))
    bad, failing = _failing(page, c)
    rerun = {}
    for s in page.sets:
        if s["suite"] == suite:
            template = {"id": ROW_ID_MARK, "set": s["name"]}
            rerun[str(page.index[(suite, s["name"])])] = rerun_command(page.document, c, template)
    names = {s["name"] for s in page.sets if s["suite"] == suite}
    return {
        "key": combo_key(c),
        "suite": suite,
        "client": c["client"],
        "server": c["server"],
        "transport": c["transport"],
        "auth": c["auth"],
        "status": str(c["status"]),
        "reason": c.get("reason", ""),
        "errors": c.get("errors", []),
        "counts": c.get("counts", {}),
        "langs": [page.language(c["client"]), page.language(c["server"])],
        "n": n,
        "rows": bad,
        "failing": failing,
        "rerun": rerun,
        "logs": _log_files(page.logs_dir, c, names, page.logs) if page.logs_dir else [],
    }


def _failing(
    page: _Page, c: dict[str, Any]
) -> tuple[dict[str, list[list[int]]], list[dict[str, Any]]]:
    """The combination's rows that did not pass (and whose set and position the report
    describes): [position, status code] by set index, and each row for the script
    (its error, adapter status, actual, unasserted v1 paths, repro bundle and the
    rules charged); each row's scenario noted once in `page.scenarios`."""
    suite = c["suite"]
    positions = page.places.get(suite, {})
    bad: dict[str, list[list[int]]] = {}
    failing: list[dict[str, Any]] = []
    for row in rows_of(page.document, c):
        si = page.index.get((suite, row["set"]))
        at = positions.get((row["set"], str(row["id"])))
        if si is None or at is None or row.get("status") == "passed":
            continue
        bad.setdefault(str(si), []).append([at, page.code.get(str(row["status"]), 0)])
        item = {"s": si, "i": at, "id": str(row["id"]), "status": str(row["status"])}
        for key in ("error", "adapterStatus", "actual"):
            if key in row:
                item[key] = row[key]
        diagnostics = row.get("diagnostics") or {}
        if isinstance(diagnostics.get("notAssertedForV1"), list):
            item["unasserted"] = diagnostics["notAssertedForV1"]
        if isinstance(diagnostics.get("bundle"), str):
            item["bundle"] = diagnostics["bundle"]
        rules = _rules_of(page.document, c, row)
        if rules:
            item["rules"] = rules
        failing.append(item)
        _note_scenario(page, suite, si, row)
    return bad, failing


def _note_scenario(page: _Page, suite: str, si: int, row: dict[str, Any]) -> None:
    """A failing row's scenario, once per `set index/id`: its expectation and, when its
    file holds it, the row (a suite of exchange rows: its request, response and tags)."""
    scenario_key = f"{si}/{row['id']}"
    if scenario_key in page.scenarios:
        return
    raw = (page.loaded[si] or {}).get(str(row["id"]))
    shown: dict[str, Any] = {"expected": row.get("expected")}
    if isinstance(raw, dict):
        if _exchange_rows(suite) and "request" in raw:
            shown["kind"] = "core"
            shown["row"] = {k: raw[k] for k in ("request", "response", "tags") if k in raw}
        else:
            shown["kind"] = "row"
            shown["row"] = raw
    page.scenarios[scenario_key] = shown


BASELINE_SHOWN = 50  # entries listed per section of the baseline diff


def _baseline(changes: dict[str, Any]) -> str:
    """What changed since the baseline report: regressions first, then each section."""
    from interop.report.diff import SECTIONS

    verdict = "regressions" if changes.get("regression") else "no regression"
    parts = [f"<section id='baseline'><h2>Since the baseline: {escape(verdict)}</h2>"]
    for note in changes.get("notes", []):
        parts.append(f"<p class='note'>{escape(str(note))}</p>")
    regressions = changes.get("regressions", [])
    if regressions:
        parts.append("<h3>Regressions</h3><ul>")
        parts += [f"<li>{_linked(str(r))}</li>" for r in regressions[:BASELINE_SHOWN]]
        if len(regressions) > BASELINE_SHOWN:
            parts.append(f"<li>... and {len(regressions) - BASELINE_SHOWN} more</li>")
        parts.append("</ul>")
    empty = True
    for key, title in SECTIONS:
        entries = changes.get(key, [])
        if not entries:
            continue
        empty = False
        parts.append(f"<details><summary>{escape(title)} ({len(entries)})</summary><ul>")
        for entry in entries[:BASELINE_SHOWN]:
            old, new = entry.get("old") or "(absent)", entry.get("new") or "(absent)"
            detail = f": {entry['detail']}" if entry.get("detail") else ""
            parts.append(
                f"<li>{_linked(str(entry.get('path')))} "
                f"{escape(str(old))} &rarr; {escape(str(new))}{escape(detail)}</li>"
            )
        if len(entries) > BASELINE_SHOWN:
            parts.append(f"<li>... and {len(entries) - BASELINE_SHOWN} more</li>")
        parts.append("</ul></details>")
    if empty and not regressions:
        parts.append("<p>No differences.</p>")
    parts.append("</section>")
    return "".join(parts)


def _linked(path: str) -> str:
    """A row or combination path of the diff (`suite/set/client->server/transport/auth/id`,
    or without set and id), as code linking to its combination on this page."""
    parts = path.split(":", 1)[0].split("/")
    pair = next((i for i, p in enumerate(parts) if "->" in p), None)
    code = f"<code>{escape(path)}</code>"
    if pair is None or len(parts) < pair + 3:
        return code
    key = "/".join([parts[0], *parts[pair : pair + 3]])
    return f"<a href='{escape('#combo=' + quote(key, safe='/->'))}'>{code}</a>"


def build_html(
    document: dict[str, Any],
    *,
    run: dict[str, Any] | None = None,
    logs_dir: Path | None = None,
    root: Path | None = None,
    baseline: dict[str, Any] | None = None,
) -> bytes:
    """The page for one report. `run`: the timings (a run date, the duration; optional);
    `logs_dir`: the NAME-logs folder whose tails to embed; `root`: where `sets[].file`
    are found (default: this repository); `baseline`: a `ReportDiff.as_json()` against
    an earlier report, shown as a section of changes (interop/report/diff.py)."""
    statuses = _statuses(document)
    data = _data(document, statuses, root or ROOT, logs_dir)
    combos = document.get("combinations", [])
    adapters = document.get("adapters") or {}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        "<title>AHP Interop Matrix report</title>",
        f"<style>{_STYLE}</style></head><body>",
        _header(document, statuses, run),
        "<nav id='filters'>",
        "<label>suite <select id='f-suite'></select></label>",
        "<label>status <select id='f-status'></select></label>",
        "<label>language <select id='f-lang'></select></label>",
        "<label>tag <select id='f-tag'></select></label>",
        "<a href='#' id='f-reset'>reset</a><span id='shown'></span></nav><main>",
        "<section id='view' class='hidden'></section>",
    ]
    if data["harnessLog"]:
        parts.append(
            "<details class='warn'><summary>harness.log (a harness traceback)</summary>"
            f"<pre>{escape(data['harnessLog'])}</pre></details>"
        )
    if baseline is not None:
        parts.append(_baseline(baseline))
    for suite in data["suites"]:
        mine = [(i, c) for i, c in enumerate(combos) if c["suite"] == suite]
        if mine:
            parts.append(_grid(suite, mine, adapters))
    parts.append(_coverage(document.get("coverage")))
    parts.append(
        "<noscript><p class='warn'>The combination view and the filters need JavaScript; "
        "the grid above is complete without it.</p></noscript></main>"
    )
    parts.append(f"<script type='application/json' id='report-data'>{_json_script(data)}</script>")
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(parts).encode("utf-8")


def _exchange_rows(suite: str) -> bool:
    """Whether a suite's row is one request and its response (shown as such)."""
    declared = DECLARATIONS.get(suite)
    return declared is not None and declared.exchange_rows
