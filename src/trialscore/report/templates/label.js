"use strict";
(function () {
  var trials = Array.prototype.slice.call(document.querySelectorAll(".trial"));
  function cell(text) {
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }
  function marked(trial) {
    var chosen = trial.querySelector("input[type=radio]:checked");
    return chosen ? chosen.value : null;
  }
  function count() {
    var done = 0;
    trials.forEach(function (trial) {
      var value = marked(trial);
      trial.classList.toggle("marked", value !== null);
      if (value !== null) { done += 1; }
    });
    document.getElementById("count").textContent = String(done);
  }
  function labels() {
    var rows = ["case_id,trial,target,passed"];
    trials.forEach(function (trial) {
      var value = marked(trial);
      if (value === null) { return; }
      rows.push([trial.dataset.case, trial.dataset.trial, trial.dataset.target, value].map(cell).join(","));
    });
    return rows.join("\n") + "\n";
  }
  window.trialscoreLabels = labels;
  document.addEventListener("change", count);
  document.getElementById("download").addEventListener("click", function () {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([labels()], { type: "text/csv" }));
    link.download = "labels.csv";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
  });
  count();
})();
