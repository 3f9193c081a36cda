// Two small calculators used by the chapters. Plain JavaScript, no dependencies.
//
//  * Amdahl (chapter 7): fraction f of the time spent in the part you speed up, its local
//    speedup s -> end-to-end speedup 1 / ((1 - f) + f / s), the ceiling 1 / (1 - f) that an
//    infinitely fast part would give, and the share of that ceiling's gain you captured,
//    (speedup - 1) / (ceiling - 1).
//  * Bytes and time floor (chapter 1): a tensor shape, its dtype and the number of times it
//    crosses HBM -> bytes moved and the shortest possible time at a given bandwidth; with a
//    measured time, the achieved bandwidth and its fraction of the given one.
//
// Every output carries its unrounded value in a data-value attribute (the browser test reads it).
(function () {
  "use strict";

  function num(el) {
    var v = parseFloat(String(el.value).replace(/,/g, ""));
    return isFinite(v) ? v : NaN;
  }

  function put(root, name, value, text) {
    var el = root.querySelector('[data-out="' + name + '"]');
    if (!el) return;
    el.setAttribute("data-value", isFinite(value) ? String(value) : "");
    el.textContent = text;
  }

  function say(root, message) {
    var el = root.querySelector("[data-out=message]");
    if (el) el.textContent = message || "";
  }

  // ---- Amdahl --------------------------------------------------------------------------------
  function amdahl(f, s) {
    var speedup = 1 / ((1 - f) + f / s);
    var ceiling = f < 1 ? 1 / (1 - f) : Infinity;
    var captured = ceiling > 1 && isFinite(ceiling) ? (speedup - 1) / (ceiling - 1) : NaN;
    return { speedup: speedup, ceiling: ceiling, captured: captured };
  }

  function updateAmdahl(root) {
    var f = num(root.querySelector("[data-in=f]"));
    var s = num(root.querySelector("[data-in=s]"));
    var bad = "";
    if (!(f >= 0 && f <= 1)) bad = "f is a fraction of the run time: between 0 and 1 (0.21 means 21%).";
    else if (!(s > 0)) bad = "s is a speedup factor: greater than 0 (1.49 means 1.49\u00d7 faster).";
    say(root, bad);
    if (bad) {
      ["speedup", "ceiling", "captured"].forEach(function (k) { put(root, k, NaN, "\u2014"); });
      return;
    }
    var r = amdahl(f, s);
    put(root, "speedup", r.speedup, r.speedup.toFixed(3) + "\u00d7");
    put(root, "ceiling", r.ceiling, isFinite(r.ceiling) ? r.ceiling.toFixed(3) + "\u00d7" : "unbounded (f = 1)");
    put(root, "captured", r.captured,
        isFinite(r.captured) ? (100 * r.captured).toFixed(1) + "%" : "\u2014 (no gain is possible when f = 0)");
    if (f === 1) put(root, "captured", NaN, "\u2014 (the ceiling is unbounded when f = 1)");
  }

  // ---- Bytes and time floor ------------------------------------------------------------------
  function parseShape(text) {
    var parts = String(text).trim().split(/[\sx\u00d7*,()\[\]]+/i).filter(function (p) { return p.length; });
    if (!parts.length) return null;
    var dims = parts.map(Number);
    for (var i = 0; i < dims.length; i++) {
      if (!(dims[i] >= 1) || Math.floor(dims[i]) !== dims[i]) return null;
    }
    return dims;
  }

  function group(n) {
    return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  function human(bytes) {
    var units = [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]];
    for (var i = 0; i < units.length; i++) {
      if (bytes >= units[i][1]) return (bytes / units[i][1]).toFixed(1) + " " + units[i][0];
    }
    return bytes + " B";
  }

  function humanBinary(bytes) {
    var units = [["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
    for (var i = 0; i < units.length; i++) {
      if (bytes >= units[i][1]) return (bytes / units[i][1]).toFixed(1) + " " + units[i][0];
    }
    return bytes + " B";
  }

  function time(us) {
    if (us >= 1000) return (us / 1000).toFixed(3) + " ms";
    return us.toFixed(2) + " \u00b5s";
  }

  function updateBytes(root) {
    var dims = parseShape(root.querySelector("[data-in=shape]").value);
    var itemsize = num(root.querySelector("[data-in=dtype]"));
    var passes = num(root.querySelector("[data-in=passes]"));
    var gbps = num(root.querySelector("[data-in=gbps]"));
    var measuredUs = num(root.querySelector("[data-in=measured]"));
    var bad = "";
    if (!dims) bad = "Shape: positive whole numbers separated by \u00d7, x or commas, e.g. 4096 x 4096.";
    else if (!(passes > 0)) bad = "Passes: how many times the tensor crosses HBM (a read and a write is 2).";
    else if (!(gbps > 0)) bad = "Bandwidth: GB/s, greater than 0.";
    say(root, bad);
    var names = ["elements", "bytes", "floor", "achieved", "fraction"];
    if (bad) { names.forEach(function (k) { put(root, k, NaN, "\u2014"); }); return; }
    var elements = dims.reduce(function (a, b) { return a * b; }, 1);
    var bytes = elements * itemsize * passes;
    var floorUs = bytes / (gbps * 1e9) * 1e6;
    put(root, "elements", elements, group(elements));
    put(root, "bytes", bytes, group(bytes) + " B (" + human(bytes) + ", " + humanBinary(bytes) + ")");
    put(root, "floor", floorUs, time(floorUs));
    if (measuredUs > 0) {
      var achieved = bytes / (measuredUs * 1e-6) / 1e9;
      put(root, "achieved", achieved, achieved.toFixed(1) + " GB/s");
      put(root, "fraction", achieved / gbps, (100 * achieved / gbps).toFixed(1) + "%");
      if (achieved > gbps) {
        // Above the ceiling is not a result (chapter 1): the input stayed in L2, or the byte count
        // counts bytes the kernel never moved, or the time is wrong.
        say(root, "Impossible: " + (100 * achieved / gbps).toFixed(1) + "% of the bandwidth you gave. No kernel " +
            "moves HBM bytes faster than the ceiling: check that the input is larger than the L2, that the " +
            "passes count only bytes that cross HBM, and the measured time.");
      }
    } else {
      put(root, "achieved", NaN, "\u2014 (enter a measured time)");
      put(root, "fraction", NaN, "\u2014");
    }
  }

  var kinds = { amdahl: updateAmdahl, bytes: updateBytes };

  function attach() {
    document.querySelectorAll("[data-calculator]").forEach(function (root) {
      var update = kinds[root.getAttribute("data-calculator")];
      if (!update || root.getAttribute("data-ready")) return;
      root.setAttribute("data-ready", "1");
      root.querySelectorAll("input, select").forEach(function (el) {
        el.addEventListener("input", function () { update(root); });
        el.addEventListener("change", function () { update(root); });
      });
      update(root);
    });
  }

  // Exposed for the console and for tests: window.courseCalculators.amdahl(0.21, 1.49).
  window.courseCalculators = { amdahl: amdahl, parseShape: parseShape };

  if (typeof document$ !== "undefined") document$.subscribe(attach);
  else document.addEventListener("DOMContentLoaded", attach);
})();
