// The page's helpers (ts), shared by the panels' scripts; ts.start() runs once every script is in.
var ts = {
  data: JSON.parse(document.getElementById("trial-data").textContent),
  names: { p: "pass", f: "fail", b: "borderline", e: "error" },
  kept: [],
  openers: []
};

// An element with its text set as text (never parsed as HTML).
ts.el = function (tag, text, cls) {
  var node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
};

// The run's distinct texts come deflated (see packing.pack): unpacked once, by the browser itself.
function unpack(packed) {
  var raw = atob(packed || "");
  if (!raw) return Promise.resolve([]);
  var bytes = new Uint8Array(raw.length);
  for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Response(stream).text().then(JSON.parse);
}
ts.ready = unpack(ts.data.cases ? ts.data.cases.texts : "").then(function (texts) {
  if (ts.data.cases) ts.data.cases.texts = texts;
});

// A text of the run's table of distinct texts: [text, full length] when it was cut.
ts.text = function (index) {
  var value = ts.data.cases.texts[index];
  return Array.isArray(value) ? value[0] : value;
};
ts.cut = function (index) {
  var value = ts.data.cases.texts[index];
  return Array.isArray(value) ? value[1] : null;
};

// What survives a live page's reload: panels register how to save and restore their state.
ts.keep = function (save, restore) { ts.kept.push([save, restore]); };

// A permalink: #case=ID&trial=N (and &target=T when the run has several targets).
ts.link = function (caseId, target, trial) {
  var params = new URLSearchParams();
  params.set("case", caseId);
  if (target && ts.data.cases && ts.data.cases.targets) params.set("target", target);
  if (trial !== undefined && trial !== null) params.set("trial", String(trial));
  return "#" + params.toString();
};

function follow() {
  var params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("case")) return;
  ts.openers.forEach(function (open) {
    open(params.get("case"), params.get("target"), params.get("trial"));
  });
}

var storeKey = "trialscore:" + location.pathname;

function remember() {
  var state = { x: window.scrollX, y: window.scrollY, seq: ts.data.live ? ts.data.live.seq : null, same: 0, panels: [] };
  try {
    var before = JSON.parse(sessionStorage.getItem(storeKey) || "null");
    if (before && before.seq === state.seq) state.same = before.same + 1;
  } catch (e) { /* no storage: nothing to carry over */ }
  state.panels = ts.kept.map(function (pair) { return pair[0](); });
  try { sessionStorage.setItem(storeKey, JSON.stringify(state)); } catch (e) { /* ignored */ }
}

function recall() {
  var state = null;
  try {
    state = JSON.parse(sessionStorage.getItem(storeKey) || "null");
    if (!ts.data.live) sessionStorage.removeItem(storeKey);
  } catch (e) { return null; }
  if (!state) return null;
  ts.kept.forEach(function (pair, i) { if (state.panels && i < state.panels.length) pair[1](state.panels[i]); });
  window.scrollTo(state.x || 0, state.y || 0);
  return state;
}

ts.start = function () {
  var state = recall();
  ts.ready.then(follow);
  window.addEventListener("hashchange", function () { ts.ready.then(follow); });
  var live = ts.data.live;
  if (!live) return;
  // A live page reloads itself every few seconds while the run goes; the run's last write is not
  // live, so the reloading stops with the run.  A run that stopped writing (killed) stops it too.
  var quiet = state && state.seq === live.seq ? (state.same + 1) * live.refresh : 0;
  var notice = document.getElementById("live");
  if (quiet >= live.stale) {
    notice.textContent = "Running, but nothing new for " + Math.round(quiet) +
      " s: stopped reloading (reload the page to look again).";
    return;
  }
  window.setTimeout(function () { remember(); location.reload(); }, live.refresh * 1000);
};
