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
    return v === null ? cell.textContent.toLowerCase() : parseFloat(v);
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
        (!errored.checked || tr.getAttribute("data-e") !== "0") &&
        (!category.value || tr.getAttribute("data-c") === category.value) &&
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

  function open(tr, button) {
    var index = parseInt(tr.getAttribute("data-i"), 10);
    var trials = data.trials[index];
    opener = button;
    document.getElementById("drawer-title").textContent = button.textContent +
      (tr.cells[0].textContent ? " (" + tr.cells[0].textContent + ")" : "");
    drawerBody.textContent = "";
    drawerBody.appendChild(el("p", tr.cells[3].textContent + " passed; pass rate " + tr.cells[4].textContent));
    if (!trials) {
      drawerBody.appendChild(el("p", "This format records counts only: no per-trial detail."));
    } else {
      trials.forEach(function (t) {
        var box = el("div", null, "trial");
        box.appendChild(el("h3", "trial " + t[0] + ": " + t[1]));
        box.appendChild(el("p", "score " + fmt(t[2]) + " · cost " + (t[3] === null ? "—" : "$" + t[3]) +
          " · latency " + fmt(t[4], " s")));
        if (t[5] !== null) {
          box.appendChild(el("p", t[6] > t[5].length ? "output (first " + t[5].length + " of " + t[6] +
            " characters)" : "output"));
          box.appendChild(el("pre", t[5]));
        }
        if (t[7] !== null) {
          box.appendChild(el("p", "error"));
          box.appendChild(el("pre", t[7]));
        }
        if (t[8].length) {
          var list = el("ul");
          t[8].forEach(function (g) {
            list.appendChild(el("li", g[0] + ": score " + fmt(g[1]) + (g[2] === null ? "" : g[2] ? ", passed" :
              ", failed") + (g[3] ? " — " + g[3] : "")));
          });
          box.appendChild(list);
        }
        drawerBody.appendChild(box);
      });
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
