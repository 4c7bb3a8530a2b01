// Word diffs of the cases whose verdict flipped: ops are [op, text], 0 kept, -1 deleted, 1 inserted.
var diffs = ts.data.against.diffs, el = ts.el;

ts.diff = function (entry) {
  var box = el("div", null, "diff-box");
  box.appendChild(el("p", "The baseline's most common output (" + entry.before[0] + " of " + entry.before[1] +
    " trials) against this run's (" + entry.now[0] + " of " + entry.now[1] + "):", "diff-note"));
  var body = el("p", null, "diff");
  entry.ops.forEach(function (op) {
    body.appendChild(op[0] === 0 ? document.createTextNode(op[1]) : el(op[0] < 0 ? "del" : "ins", op[1]));
  });
  box.appendChild(body);
  return box;
};

Array.prototype.forEach.call(document.querySelectorAll("#against table.changed tr[data-i]"), function (tr) {
  var entry = diffs[tr.getAttribute("data-i")];
  var cell = tr.querySelector(".diff-cell");
  if (!entry) {
    cell.textContent = "—";
    return;
  }
  var details = el("details");
  var changes = entry.ops.filter(function (op) { return op[0] !== 0; }).length;
  details.appendChild(el("summary", changes ? "word diff (" + changes + " change" + (changes === 1 ? "" : "s") + ")" :
    "the same most common output"));
  details.appendChild(ts.diff(entry));
  cell.appendChild(details);
});
