(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("trial-data").textContent);
  var table = document.getElementById("cases");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var names = { p: "pass", f: "fail", b: "borderline", e: "error" };
  var shown = document.getElementById("shown");
  var drawer = document.getElementById("drawer");
  var drawerBody = document.getElementById("drawer-body");
  var opener = null;

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

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
    cell.setAttribute("aria-label", Object.keys(names).filter(function (k) { return tally[k]; })
      .map(function (k) { return tally[k] + " " + names[k]; }).join(", "));
    cell.setAttribute("role", "img");
  });

  function key(tr, col) {
    var cell = tr.cells[col];
    var v = cell.getAttribute("data-v");
    if (v !== null) return parseFloat(v);
    return col === 5 ? parseFloat(cell.textContent) : cell.textContent.toLowerCase();
  }

  Array.prototype.forEach.call(table.tHead.querySelectorAll("button"), function (btn) {
    btn.addEventListener("click", function () {
      var th = btn.parentNode;
      var col = parseInt(btn.getAttribute("data-k"), 10);
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(table.tHead.querySelectorAll("th[aria-sort]"), function (h) {
        h.setAttribute("aria-sort", "none");
      });
      th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      var order = rows.map(function (tr, i) { return [key(tr, col), i, tr]; });
      order.sort(function (a, b) {
        return a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1] - b[1];
      });
      order.forEach(function (entry) { body.appendChild(entry[2]); });
    });
  });

  var q = document.getElementById("q");
  var flaky = document.getElementById("f-flaky");
  var failing = document.getElementById("f-failing");
  var errored = document.getElementById("f-errored");
  var category = document.getElementById("f-cat");

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
  [q, flaky, failing, errored, category].forEach(function (input) {
    input.addEventListener(input === q ? "input" : "change", apply);
  });

  function fmt(v, suffix) { return v === null || v === undefined ? "—" : v + (suffix || ""); }

  function text(v) { return v === null || v === undefined ? "—" : String(v); }

  // A case's trials, column by column: [indices (null = 0..n-1), scores, costs, latencies,
  // outputs (a cut one is [text, full length]), errors, graders ([name index, score, passed, reason])].
  function open(tr, button) {
    var cols = data.trials[rows.indexOf(tr)];
    var letters = tr.getAttribute("data-t");
    opener = button;
    document.getElementById("drawer-title").textContent = button.textContent +
      (tr.cells[0].textContent ? " (" + tr.cells[0].textContent + ")" : "");
    drawerBody.textContent = "";
    drawerBody.appendChild(el("p", tr.cells[3].textContent + " passed; pass rate " + tr.cells[4].textContent));
    var question = data.asked[rows.indexOf(tr)];
    if (question) {
      ["input", "expected"].forEach(function (name, k) {
        var value = question[k];
        if (value === null) return;
        var cut = Array.isArray(value);
        drawerBody.appendChild(el("p", cut ? name + " (first " + value[0].length + " of " + value[1] + " characters)" : name, "asked"));
        drawerBody.appendChild(el("pre", cut ? value[0] : value, "asked"));
      });
    }
    if (!cols) {
      drawerBody.appendChild(el("p", "This format records counts only: no per-trial detail."));
    } else {
      for (var i = 0; i < letters.length; i++) {
        var pick = function (c) { return cols[c] ? cols[c][i] : null; };
        var box = el("div", null, "trial");
        box.appendChild(el("h3", "trial " + (cols[0] ? cols[0][i] : i) + ": " + names[letters.charAt(i)]));
        box.appendChild(el("p", "score " + text(pick(1)) + " · cost " + (pick(2) === null ? "—" : "$" + pick(2)) +
          " · latency " + (pick(3) === null ? "—" : pick(3) + " s")));
        var out = pick(4);
        if (out !== null) {
          var cut = Array.isArray(out);
          box.appendChild(el("p", cut ? "output (first " + out[0].length + " of " + out[1] + " characters)" : "output"));
          box.appendChild(el("pre", cut ? out[0] : out));
        }
        if (pick(5) !== null) {
          box.appendChild(el("p", "error"));
          box.appendChild(el("pre", pick(5)));
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
    document.getElementById("drawer-close").focus();
  }

  function close() {
    drawer.hidden = true;
    if (opener) opener.focus();
  }

  body.addEventListener("click", function (event) {
    var button = event.target.closest("button.case");
    if (button) open(button.closest("tr"), button);
  });
  document.getElementById("drawer-close").addEventListener("click", close);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !drawer.hidden) close();
  });
})();
