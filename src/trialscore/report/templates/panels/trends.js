// The case x run heat map: a row per case, a cell per run coloured by its pass rate (h0..h10).
var heat = ts.data.trends, el = ts.el;
var box = document.getElementById("heat");
var grid = el("table", null, "heat-grid");
var head = el("tr");
head.appendChild(el("th", "case", "heat-case"));
heat.runs.forEach(function (run, i) {
  var th = el("th", null, "heat-run");
  th.scope = "col";
  if (run[0]) {
    var time = el("time", run[0]);
    time.setAttribute("datetime", run[0]);
    th.appendChild(time);
  } else th.textContent = String(i + 1);
  th.title = run[1] + (run[0] ? " (" + run[0] + ")" : "");
  head.appendChild(th);
});
var thead = el("thead");
thead.appendChild(head);
grid.appendChild(thead);
heat.groups.forEach(function (group) {
  var tbody = el("tbody");
  var top = el("tr", null, "heat-group");
  var th = el("th", group[0] + " (" + group[2].length + " case" + (group[2].length === 1 ? "" : "s") + ")");
  th.colSpan = 1 + heat.runs.length;
  th.scope = "rowgroup";
  if (group[1]) {
    th.appendChild(document.createTextNode(" · trend: "));
    th.appendChild(el("span", group[1], "verdict " + group[1]));
  }
  top.appendChild(th);
  tbody.appendChild(top);
  group[2].forEach(function (entry) {
    var tr = el("tr");
    var name = el("th", entry[0] + (entry[1] ? " (" + entry[1] + ")" : ""), "heat-case");
    name.scope = "row";
    tr.appendChild(name);
    entry[2].forEach(function (cell, i) {
      var td = el("td");
      var when = heat.runs[i][0] || "run " + (i + 1);
      if (cell === null) {
        td.className = "none";
        td.title = "not in the run of " + when;
      } else if (cell[1] === 0) {
        td.className = "none";
        td.title = "no scored trial in the run of " + when;
      } else {
        td.className = "h" + Math.round(10 * cell[0] / cell[1]);
        td.title = cell[0] + "/" + cell[1] + " passed in the run of " + when;
      }
      td.setAttribute("aria-label", td.title);
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
  grid.appendChild(tbody);
});
box.appendChild(grid);
