// The cases table (strips, sorting, filtering, search) and the case drawer.
var data = ts.data.cases, el = ts.el, names = ts.names;
var table = document.getElementById("case-table");
var body = table.tBodies[0];
var rows = Array.prototype.slice.call(body.rows);
var shown = document.getElementById("shown");
var drawer = document.getElementById("drawer");
var drawerBody = document.getElementById("drawer-body");
var opener = null, current = null;

rows.forEach(function (tr) {
  var cell = tr.cells[2];
  var letters = cell.textContent.trim();
  var tally = {};
  tr.setAttribute("data-t", letters);
  cell.textContent = "";
  for (var i = 0; i < letters.length; i++) {
    var ch = letters.charAt(i);
    tally[ch] = (tally[ch] || 0) + 1;
    cell.appendChild(el("b", null, ch));
  }
  cell.setAttribute("aria-label", tallyText(tally));
  cell.setAttribute("role", "img");
});

function tallyText(tally) {
  return Object.keys(names).filter(function (k) { return tally[k]; })
    .map(function (k) { return tally[k] + " " + names[k]; }).join(", ");
}

function key(tr, col) {
  var cell = tr.cells[col];
  var v = cell.getAttribute("data-v");
  if (v !== null) return parseFloat(v);
  return col === 5 ? parseFloat(cell.textContent) : cell.textContent.toLowerCase();
}

var sorted = null;
function sortBy(col, dir) {
  var th = table.tHead.querySelector('button[data-k="' + col + '"]').parentNode;
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[aria-sort]"), function (h) {
    h.setAttribute("aria-sort", "none");
  });
  th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
  var order = rows.map(function (tr, i) { return [key(tr, col), i, tr]; });
  order.sort(function (a, b) { return a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1] - b[1]; });
  order.forEach(function (entry) { body.appendChild(entry[2]); });
  sorted = [col, dir];
}
Array.prototype.forEach.call(table.tHead.querySelectorAll("button"), function (btn) {
  btn.addEventListener("click", function () {
    var col = parseInt(btn.getAttribute("data-k"), 10);
    sortBy(col, btn.parentNode.getAttribute("aria-sort") === "ascending" ? -1 : 1);
  });
});

var inputs = ["q", "f-flaky", "f-failing", "f-errored", "f-cat"].map(function (id) { return document.getElementById(id); });
var q = inputs[0], flaky = inputs[1], failing = inputs[2], errored = inputs[3], category = inputs[4];
function apply() {
  var text = q.value.trim().toLowerCase();
  var count = 0;
  rows.forEach(function (tr) {
    var state = tr.getAttribute("data-s");
    var ok = (!flaky.checked || state === "flaky") &&
      (!failing.checked || state === "fail" || state === "flaky") &&
      (!errored.checked || tr.hasAttribute("data-e")) &&
      (!category.value || tr.cells[7].textContent === category.value) &&
      (!text || tr.textContent.toLowerCase().indexOf(text) >= 0);
    tr.hidden = !ok;
    if (ok) count++;
  });
  shown.textContent = count + " of " + rows.length + " cases";
}
inputs.forEach(function (input) { input.addEventListener(input === q ? "input" : "change", apply); });
// A live page's reload keeps the filters and sort; the open case is in the address (its permalink).
ts.keep(function () {
  return { q: q.value, checks: [flaky.checked, failing.checked, errored.checked], cat: category.value, sorted: sorted };
}, function (state) {
  q.value = state.q; flaky.checked = state.checks[0]; failing.checked = state.checks[1];
  errored.checked = state.checks[2]; category.value = state.cat;
  if (state.sorted) sortBy(state.sorted[0], state.sorted[1]);
  apply();
});

function text(v) { return v === null || v === undefined ? "—" : String(v); }

// The strips of a case's tool calls: one row per trial, a mark per call (its tool's name, its
// arguments as the mark's title); the step where the trials diverge is marked.
ts.callStrips = function (calls, letters, trialNames, quiet) {
  var box = el("div", null, "calls");
  if (calls[1] !== null && !quiet) box.appendChild(el("p", "The trials diverge at step " + calls[1] + ".", "diverge"));
  calls[0].forEach(function (strip, i) {
    var line = el("div", null, "call-strip");
    line.appendChild(el("span", "trial " + trialNames[i] + " (" + names[letters.charAt(i)] + ")", "call-trial"));
    if (strip === null) line.appendChild(el("span", "no calls recorded", "call-none"));
    else if (!strip.length) line.appendChild(el("span", "no tool called", "call-none"));
    else strip.forEach(function (call, step) {
      var args = ts.text(call[1]).slice(1, -1);
      var shown = data.tools[call[0]] + (args ? "(" + (args.length > 24 ? args.slice(0, 23) + "…" : args) + ")" : "");
      var mark = el("span", shown, "call" + (calls[1] !== null && step + 1 >= calls[1] ? " after" : ""));
      mark.title = "step " + (step + 1) + ": " + data.tools[call[0]] + " " + ts.text(call[1]);
      line.appendChild(mark);
    });
    box.appendChild(line);
  });
  return box;
};

function trialNames(cols, count) {
  var out = [];
  for (var i = 0; i < count; i++) out.push(cols && cols[0] ? cols[0][i] : i);
  return out;
}

function pre(index) {
  var node = el("pre", ts.text(index));
  var full = ts.cut(index);
  if (full !== null) node.setAttribute("data-cut", "first " + ts.text(index).length + " of " + full + " characters");
  return node;
}

// Distinct texts of a case with counts: groups = [exact, loose], each [[text index, [positions]]].
function groupList(groups, letters, trialIds, caseId, target, title) {
  var box = el("div", null, "groups");
  var head = el("h3", title);
  box.appendChild(head);
  var loose = groups[1] !== groups[0] && JSON.stringify(groups[1]) !== JSON.stringify(groups[0]);
  var list = el("ol", null, "group-list");
  function draw(which) {
    list.textContent = "";
    groups[which].forEach(function (group) {
      var item = el("li", null, "group");
      var tally = {};
      group[1].forEach(function (p) { var ch = letters.charAt(p); tally[ch] = (tally[ch] || 0) + 1; });
      var line = el("p", null, "group-head");
      line.appendChild(el("strong", group[1].length + "×", "count"));
      line.appendChild(document.createTextNode(" " + tallyText(tally) + "; trials "));
      group[1].forEach(function (p, k) {
        if (k) line.appendChild(document.createTextNode(", "));
        var a = el("a", trialIds[p]);
        a.href = ts.link(caseId, target, trialIds[p]);
        line.appendChild(a);
      });
      item.appendChild(line);
      item.appendChild(pre(group[0]));
      list.appendChild(item);
    });
  }
  if (loose) {
    var label = el("label", null, "loose");
    var check = el("input");
    check.type = "checkbox";
    check.addEventListener("change", function () { draw(check.checked ? 1 : 0); });
    label.appendChild(check);
    label.appendChild(document.createTextNode(" ignore whitespace and case (" + groups[1].length + (groups[1].length === 1 ? " group)" : " groups)")));
    box.appendChild(label);
  }
  draw(0);
  box.appendChild(list);
  return box;
}

// A case's trials, column by column: [indices (null = 0..n-1), scores, costs, latencies, outputs,
// errors (text indices), graders ([name index, score, passed, reason]), output groups, error groups,
// tool calls].
function open(tr, trial) {
  var index = rows.indexOf(tr);
  var cols = data.trials[index];
  var letters = tr.getAttribute("data-t");
  var caseId = tr.cells[1].textContent, target = tr.cells[0].textContent;
  var ids = trialNames(cols, letters.length);
  opener = tr.cells[1].querySelector("button");
  document.getElementById("drawer-md").textContent = "Copy as Markdown";
  current = tr;
  document.getElementById("drawer-title").textContent = caseId + (target ? " (" + target + ")" : "");
  drawerBody.textContent = "";
  var summary = tr.cells[3].textContent + " passed; pass rate " + tr.cells[4].textContent;
  if (tr.cells.length > 9) summary += "; against the baseline: " + tr.cells[9].textContent + " (" + tr.cells[8].textContent + ")";
  drawerBody.appendChild(el("p", summary, "summary"));
  var md = el("textarea", null, "md");
  md.id = "drawer-md-text";
  md.readOnly = true;
  md.hidden = true;
  md.setAttribute("aria-label", "the case as Markdown");
  drawerBody.appendChild(md);
  var question = data.asked[index];
  if (question) {
    ["input", "expected"].forEach(function (name, k) {
      var value = question[k];
      if (value === null) return;
      var cut = Array.isArray(value);
      drawerBody.appendChild(el("p", cut ? name + " (first " + value[0].length + " of " + value[1] + " characters)" : name, "asked"));
      drawerBody.appendChild(el("pre", cut ? value[0] : value, "asked"));
    });
  }
  if (ts.diff && ts.data.against && ts.data.against.diffs[String(index)]) {
    drawerBody.appendChild(el("h3", "What changed"));
    drawerBody.appendChild(ts.diff(ts.data.against.diffs[String(index)]));
  }
  if (!cols) {
    drawerBody.appendChild(el("p", "This format records counts only: no per-trial detail."));
  } else {
    if (cols[7]) drawerBody.appendChild(groupList(cols[7], letters, ids, caseId, target, "Distinct outputs"));
    if (cols[8]) drawerBody.appendChild(groupList(cols[8], letters, ids, caseId, target, "Distinct errors"));
    if (cols[9]) {
      drawerBody.appendChild(el("h3", "Tool calls"));
      drawerBody.appendChild(ts.callStrips(cols[9], letters, ids));
    }
    drawerBody.appendChild(el("h3", "Trials"));
    for (var i = 0; i < letters.length; i++) {
      var pick = function (c) { return cols[c] ? cols[c][i] : null; };
      var box = el("div", null, "trial");
      box.id = "trial-" + ids[i];
      var head = el("h4", "trial " + ids[i] + ": " + names[letters.charAt(i)] + " ");
      var link = el("a", "link", "permalink");
      link.href = ts.link(caseId, target, ids[i]);
      link.setAttribute("aria-label", "permalink to trial " + ids[i]);
      head.appendChild(link);
      box.appendChild(head);
      box.appendChild(el("p", "score " + text(pick(1)) + " · cost " + (pick(2) === null ? "—" : "$" + pick(2)) +
        " · latency " + (pick(3) === null ? "—" : pick(3) + " s")));
      if (pick(4) !== null) {
        var full = ts.cut(pick(4));
        box.appendChild(el("p", full === null ? "output" : "output (first " + ts.text(pick(4)).length + " of " + full + " characters)"));
        box.appendChild(el("pre", ts.text(pick(4))));
      }
      if (pick(5) !== null) {
        box.appendChild(el("p", "error"));
        box.appendChild(el("pre", ts.text(pick(5))));
      }
      var grades = pick(6);
      if (grades && grades.length) {
        var list = el("ul");
        grades.forEach(function (g) {
          list.appendChild(el("li", data.graders[g[0]] + ": score " + text(g[1]) +
            (g[2] === null ? "" : g[2] ? ", passed" : ", failed") + (g.length > 3 ? " — " + g[3] : "")));
        });
        box.appendChild(list);
      }
      drawerBody.appendChild(box);
    }
  }
  drawer.hidden = false;
  history.replaceState(null, "", ts.link(caseId, target, trial));
  var chosen = trial !== null && trial !== undefined ? document.getElementById("trial-" + trial) : null;
  if (chosen) {
    chosen.classList.add("chosen");
    chosen.scrollIntoView();
  }
  document.getElementById("drawer-close").focus({ preventScroll: true });
}

function close() {
  drawer.hidden = true;
  current = null;
  history.replaceState(null, "", location.pathname + location.search);
  if (opener) opener.focus();
}

ts.openers.push(function (caseId, target, trial) {
  var found = rows.filter(function (tr) {
    return tr.cells[1].textContent === caseId && (target === null || tr.cells[0].textContent === target);
  });
  if (found.length) open(found[0], trial === null ? null : parseInt(trial, 10));
});

body.addEventListener("click", function (event) {
  var button = event.target.closest("button.case");
  if (button) ts.ready.then(function () { open(button.closest("tr"), null); });
});
document.getElementById("drawer-close").addEventListener("click", close);
document.addEventListener("keydown", function (event) {
  if (event.key === "Escape" && !drawer.hidden) close();
});

// The case as Markdown, for an issue report: its counts, distinct outputs and trials.
function mdText(s) {
  return String(s).replace(/\s+/g, " ").replace(/[\\`*_{}\[\]<>()#+!|~&]/g, "\\$&");
}
function fence(s) {
  var longest = 2;
  (String(s).match(/`+/g) || []).forEach(function (run) { longest = Math.max(longest, run.length); });
  var bar = new Array(longest + 2).join("`");
  return bar + "text\n" + s + "\n" + bar;
}
ts.markdown = function (tr) {
  var index = rows.indexOf(tr);
  var cols = data.trials[index];
  var letters = tr.getAttribute("data-t");
  var caseId = tr.cells[1].textContent, target = tr.cells[0].textContent;
  var ids = trialNames(cols, letters.length);
  var out = ["### Case " + mdText(caseId) + (target ? " (" + mdText(target) + ")" : ""), ""];
  out.push("- passed: " + mdText(tr.cells[3].textContent) + "; pass rate " + mdText(tr.cells[4].textContent));
  if (tr.cells.length > 9) out.push("- against the baseline: " + mdText(tr.cells[9].textContent) + " (" + mdText(tr.cells[8].textContent) + ")");
  out.push("- trials: " + mdText(tallyText(letters.split("").reduce(function (t, ch) { t[ch] = (t[ch] || 0) + 1; return t; }, {}))));
  out.push("- permalink: " + mdText(location.pathname.split("/").pop() + ts.link(caseId, target, null)));
  if (cols && cols[7]) {
    out.push("", "#### Distinct outputs", "");
    cols[7][0].forEach(function (group) {
      var tally = {};
      group[1].forEach(function (p) { var ch = letters.charAt(p); tally[ch] = (tally[ch] || 0) + 1; });
      out.push("**" + group[1].length + "×** (" + mdText(tallyText(tally)) + "; trials " +
        group[1].map(function (p) { return ids[p]; }).join(", ") + ")", "", fence(ts.text(group[0])), "");
    });
  }
  if (cols && cols[8]) {
    out.push("#### Errors", "");
    cols[8][0].forEach(function (group) {
      out.push("**" + group[1].length + "×** (trials " + group[1].map(function (p) { return ids[p]; }).join(", ") + ")", "", fence(ts.text(group[0])), "");
    });
  }
  out.push("| trial | verdict | score | graders |", "|---|---|---|---|");
  for (var i = 0; i < letters.length; i++) {
    var grades = cols && cols[6] ? cols[6][i] : null;
    var graded = (grades || []).map(function (g) {
      return data.graders[g[0]] + " " + text(g[1]) + (g.length > 3 ? ": " + g[3] : "");
    }).join("; ");
    out.push("| " + ids[i] + " | " + names[letters.charAt(i)] + " | " + mdText(text(cols && cols[1] ? cols[1][i] : null)) +
      " | " + mdText(graded || "—") + " |");
  }
  return out.join("\n") + "\n";
};

document.getElementById("drawer-md").addEventListener("click", function () {
  if (!current) return;
  var md = ts.markdown(current);
  var area = document.getElementById("drawer-md-text");
  area.value = md;
  function manual() {
    area.hidden = false;
    area.select();
  }
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(md).then(function () {
      document.getElementById("drawer-md").textContent = "Copied as Markdown";
    }, manual);
  } else manual();
});

// Row i of the table (in the page's order) and its trials' numbers, for other panels.
ts.caseRow = function (index) { return rows[index]; };
ts.trialIds = function (index) { return trialNames(data.trials[index], rows[index].getAttribute("data-t").length); };
