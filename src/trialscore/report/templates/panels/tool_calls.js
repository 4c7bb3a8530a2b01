// The strips of the cases whose trials diverge, from the cases panel's data (once its texts are unpacked).
ts.ready.then(function () {
Array.prototype.forEach.call(document.querySelectorAll("#tool-calls tr[data-i]"), function (tr) {
  var index = parseInt(tr.getAttribute("data-i"), 10);
  var letters = ts.caseRow(index).getAttribute("data-t");
  tr.querySelector(".calls-cell").appendChild(ts.callStrips(ts.data.cases.trials[index][9], letters, ts.trialIds(index), true));
});
});
