// The quorum console page: one EventSource on /events ("full" on connect, then
// "delta" updates at most 4 a second); everything is drawn from the last state, at most
// once a frame.
"use strict";

const MAX_RECORDS = 500;
const CHART_MS = 10 * 60 * 1000;
let state = null;
let samples = [];   // [time ms, high watermark]
let records = [];   // decoded records, oldest first
let lastSeq = 0;
let omitted = 0;    // records committed between two updates beyond what one update carries
let paused = false;

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function row(cells, attrs) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = c instanceof Node ? wrap(c) : el("td", c);
    if (typeof c === "number") td.className = "num";
    tr.appendChild(td);
  }
  for (const [k, v] of Object.entries(attrs || {})) tr.setAttribute(k, v);
  return tr;
}

function wrap(node) { const td = document.createElement("td"); td.appendChild(node); return td; }

function fill(tableId, rows) {
  const body = $(tableId).querySelector("tbody");
  body.replaceChildren(...rows);
}

function clock(ms) {
  if (ms === null || ms === undefined || ms < 0) return "";
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

function ago(ms) {
  if (ms === null || ms === undefined || ms < 0 || !state) return "never";
  const s = Math.max(0, (state.now - ms) / 1000);
  return s < 1 ? "now" : s.toFixed(1) + " s ago";
}

function voterList(voters) {
  if (!voters) return "unknown";
  return voters.map((v) => v.id).join(", ") || "none";
}

function link(url, text) {
  const a = el("a", text);
  a.href = url;
  return a;
}

// -- the summary and the quorum ---------------------------------------------------------
function drawSummary() {
  $("cluster").textContent = "cluster " + state.clusterId;
  $("node-id").textContent = state.nodeId;
  $("role").textContent = state.role + (state.isVoter ? "" : " (observer)");
  $("role").className = "role " + state.role;
  $("epoch").textContent = state.epoch;
  $("leader").textContent = state.leaderId >= 0 ? state.leaderId : "unknown";
  const where = $("leader-link");
  where.replaceChildren();
  if (state.leaderId >= 0 && state.leaderId !== state.nodeId) {
    if (state.leaderConsole) where.appendChild(link(state.leaderConsole, "open the leader's console"));
    else where.textContent = "(" + (state.leaderEndpoints.join(", ") || "endpoint unknown") + ")";
  }
  $("hwm").textContent = state.highWatermark;
  $("kraft-version").textContent = state.kraftVersion;
}

function drawQuorum() {
  const q = state.quorum;
  const rows = [];
  if (q.known) {
    $("quorum-note").textContent = "as the leader sees it (DescribeQuorum)";
    for (const r of q.voters.concat(q.observers)) {
      const id = r.console ? link(r.console, r.id) : r.id;
      rows.push(row([id, r.directoryId, r.endpoints.join(", "), r.logEndOffset,
        r.lag === null ? "" : r.lag, ago(r.lastFetch), ago(r.lastCaughtUp), r.status],
        { "data-id": r.id, "data-lag": r.lag === null ? "" : r.lag, "data-status": r.status }));
    }
  } else {
    $("quorum-note").textContent = "only the leader knows every replica's offsets: this node's own log end is " +
      state.logEndOffset;
    for (const v of state.latestVoters) {
      const status = v.id === state.leaderId ? "Leader" : (v.id === state.nodeId ? "This node" : "Voter");
      const leo = v.id === state.nodeId ? state.logEndOffset : "";
      rows.push(row([v.id, v.directoryId || "", v.endpoints.join(", "), leo, "", "", "", status],
        { "data-id": v.id, "data-status": status }));
    }
  }
  fill("quorum-table", rows);
  $("latest-voters").textContent = voterList(state.latestVoters);
  $("committed-voters").textContent = voterList(state.committedVoters);
  const same = state.committedVoters && voterList(state.committedVoters) === voterList(state.latestVoters);
  $("uncommitted").textContent = state.committedVoters && !same ? "(a change is not committed yet)" : "";
}

// -- history ------------------------------------------------------------------------------
function drawTimeline() {
  const items = state.transitions.slice().reverse().map((t) => {
    const li = el("li");
    li.appendChild(el("span", clock(t.time) + " "));
    li.appendChild(el("span", t.role, t.role));
    li.appendChild(el("span", " epoch " + t.epoch + ", leader " + (t.leader >= 0 ? t.leader : "unknown") + ": "));
    li.appendChild(el("span", t.reason, "reason"));
    li.setAttribute("data-leader", t.leader);
    return li;
  });
  $("timeline").replaceChildren(...items);
}

function drawVoterHistory() {
  const rows = state.voterHistory.slice().reverse().map((h) => row([
    h.offset < 0 ? "bootstrap" : h.offset, h.time ? clock(h.time) : "",
    h.voters.map((v) => v.id + " (" + (v.directoryId || "no directory id") + ")").join(", "),
    h.committed ? "committed" : "not committed"],
    { "data-offset": h.offset, "data-voters": h.voters.map((v) => v.id).join(",") }));
  fill("voter-history", rows);
}

// -- the chart (hand-written SVG) --------------------------------------------------------
function drawChart() {
  const svg = $("chart");
  const W = 900, H = 180, pad = 30;
  const end = state.now, start = end - CHART_MS;
  const pts = samples.filter((s) => s[0] >= start);
  svg.replaceChildren();
  if (pts.length < 2) return;
  const t0 = pts[0][0], t1 = pts[pts.length - 1][0];
  const h0 = pts[0][1], h1 = pts[pts.length - 1][1];
  const rates = [];
  for (let i = 1; i < pts.length; i++) {
    const dt = (pts[i][0] - pts[i - 1][0]) / 1000;
    rates.push([pts[i][0], dt > 0 ? (pts[i][1] - pts[i - 1][1]) / dt : 0]);
  }
  const rmax = Math.max(1, ...rates.map((r) => r[1]));
  const x = (t) => pad + (W - 2 * pad) * (t - t0) / Math.max(1, t1 - t0);
  const yh = (v) => H - pad / 2 - (H - pad) * (v - h0) / Math.max(1, h1 - h0);
  const yr = (v) => H - pad / 2 - (H - pad) * v / rmax;
  const path = (list, y, cls) => {
    const p = document.createElementNS("http://www.w3.org/2000/svg", "path");
    p.setAttribute("d", list.map((s, i) => (i ? "L" : "M") + x(s[0]).toFixed(1) + "," + y(s[1]).toFixed(1)).join(""));
    p.setAttribute("class", cls);
    svg.appendChild(p);
  };
  const label = (tx, ty, text, anchor) => {
    const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    t.setAttribute("x", tx); t.setAttribute("y", ty);
    if (anchor) t.setAttribute("text-anchor", anchor);
    t.textContent = text;
    svg.appendChild(t);
  };
  path(pts, yh, "hwm");
  path(rates, yr, "rate");
  label(2, 12, h1);
  label(2, H - 4, h0);
  label(W - 2, 12, rmax.toFixed(0) + "/s", "end");
  $("chart-range").textContent = clock(t0) + " to " + clock(t1) + ", now " +
    rates[rates.length - 1][1].toFixed(1) + " records/s";
}

// -- the record tail ----------------------------------------------------------------------
function addRecords(list) {
  for (const r of list) {
    if (r.seq <= lastSeq) continue;
    if (lastSeq && r.seq > lastSeq + 1) omitted += r.seq - lastSeq - 1;
    lastSeq = r.seq;
    records.push(r);
    const select = $("record-type");
    if (![...select.options].some((o) => o.value === r.type)) select.appendChild(new Option(r.type, r.type));
  }
  if (records.length > MAX_RECORDS) records = records.slice(records.length - MAX_RECORDS);
}

function drawRecords() {
  if (paused) return;
  const type = $("record-type").value, text = $("record-text").value.toLowerCase();
  const shown = [];
  for (let i = records.length - 1; i >= 0 && shown.length < 200; i--) {
    const r = records[i];
    const fields = JSON.stringify(r.fields);
    if (type && r.type !== type) continue;
    if (text && !fields.toLowerCase().includes(text)) continue;
    const tr = row([r.offset, clock(r.time), r.type + (r.control ? " (control)" : ""), r.version, fields],
      { "data-type": r.type });
    tr.lastChild.title = fields;
    shown.push(tr);
  }
  fill("records", shown);
  const skipped = omitted + state.recordsSkipped;
  $("tail-note").textContent = records.length + " records kept" +
    (skipped ? ", " + skipped + " not shown (committed faster than a page can read)" : "");
}

// -- the image ----------------------------------------------------------------------------
function drawImage() {
  const img = state.image;
  if (!img) return;
  $("image-note").textContent = "at offset " + img.offset + ", epoch " + img.epoch;
  fill("brokers", img.brokers.map((b) => row([b.id, b.epoch,
    b.fenced ? "fenced" : (b.inControlledShutdown ? "shutting down" : "unfenced"),
    b.endpoints.join(", "), b.rack || ""], { "data-id": b.id, class: b.fenced ? "fenced" : "" })));
  fill("features", Object.entries(img.features).sort().map(([k, v]) => row([k, v])));
  const rows = [];
  for (const t of img.topics) {
    for (const p of t.rows) rows.push(row([t.name, p.partition, p.leader, p.leaderEpoch, p.replicas.join(","), p.isr.join(",")]));
    if (t.partitions > t.rows.length) rows.push(row([t.name, "+" + (t.partitions - t.rows.length) + " more", "", "", "", ""]));
  }
  if (img.topicCount > img.topics.length) rows.push(row(["+" + (img.topicCount - img.topics.length) + " more topics", "", "", "", "", ""]));
  fill("topics", rows);
}

// -- updates ------------------------------------------------------------------------------
function apply(next, full) {
  if (full) samples = [];
  const last = samples.length ? samples[samples.length - 1][0] : -1;
  for (const s of next.samples) if (s[0] > last) samples.push(s);
  samples = samples.filter((s) => s[0] >= next.now - CHART_MS);
  addRecords(next.records);
  state = next;
  scheduleDraw();
}

// Draw once a frame at most: on a loaded machine deltas pile up faster than the page can
// draw 200 rows, so they are folded into the next frame instead of each being drawn.
let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    drawSummary();
    drawQuorum();
    drawTimeline();
    drawVoterHistory();
    drawChart();
    drawRecords();
    drawImage();
  });
}

function connect() {
  const source = new EventSource("/events");
  source.addEventListener("full", (e) => { $("connection").textContent = "live"; $("connection").className = ""; apply(JSON.parse(e.data), true); });
  source.addEventListener("delta", (e) => apply(JSON.parse(e.data), false));
  source.onerror = () => { $("connection").textContent = "disconnected, retrying"; $("connection").className = "bad"; };
}

$("pause").addEventListener("click", () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused && state) drawRecords();
});
$("record-type").addEventListener("change", () => state && drawRecords());
$("record-text").addEventListener("input", () => state && drawRecords());
connect();
