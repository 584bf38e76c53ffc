/* GPU Atlas pages: small progressive enhancements. Every page works without this file:
   forms submit, headings sort on the server, <title> tooltips show on hover.
   With it: view options apply at once, drop-downs close when another opens, chart points and
   prices show their detail on tap or keyboard focus, tables marked data-sortable sort in place,
   tables with a filter box filter as you type, and the compare button counts its rows. */
(function () {
  "use strict";

  /* View options (unit, period, columns) apply as soon as they change; a drop-down of
     checkboxes applies when it closes. */
  document.querySelectorAll("form[data-autosubmit]").forEach(function (form) {
    var send = function () { if (form.requestSubmit) form.requestSubmit(); else form.submit(); };
    form.querySelectorAll("[data-autosubmit-field]").forEach(function (field) {
      var details = field.querySelector("details");
      var dirty = false;
      field.querySelectorAll("select, input").forEach(function (input) {
        input.addEventListener("change", function () {
          if (details) dirty = true; else send();
        });
      });
      if (details) {
        details.addEventListener("toggle", function () { if (!details.open && dirty) send(); });
      }
    });
  });

  /* Drop-downs of checkboxes: one open at a time; a click elsewhere or Escape closes them. */
  var multis = Array.prototype.slice.call(document.querySelectorAll("details[data-multi]"));
  multis.forEach(function (details) {
    details.addEventListener("toggle", function () {
      if (details.open) {
        multis.forEach(function (other) { if (other !== details) other.open = false; });
      }
    });
  });
  document.addEventListener("click", function (event) {
    multis.forEach(function (details) {
      if (details.open && !details.contains(event.target)) details.open = false;
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      multis.forEach(function (details) {
        if (details.open) { details.open = false; details.querySelector("summary").focus(); }
      });
      hideTip();
    }
  });

  /* Tap, click or focus a chart mark (or a price) to see its detail: title tooltips alone do not
     show on touch screens. */
  var tip = null;
  function hideTip() { if (tip) { tip.remove(); tip = null; } }
  function tipText(element) {
    var title = element.querySelector(":scope > title");
    return title ? title.textContent : element.getAttribute("data-tip-text") || "";
  }
  function showTip(element) {
    var text = tipText(element);
    if (!text) return;
    hideTip();
    tip = document.createElement("div");
    tip.className = "tip-box";
    tip.setAttribute("role", "status");
    tip.textContent = text;
    document.body.appendChild(tip);
    var box = element.getBoundingClientRect();
    var left = window.scrollX + box.left + box.width / 2 - tip.offsetWidth / 2;
    left = Math.max(window.scrollX + 4, Math.min(left, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 4));
    var top = window.scrollY + box.top - tip.offsetHeight - 8;
    if (top < window.scrollY) top = window.scrollY + box.bottom + 8;
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }
  document.querySelectorAll("svg.chart circle, svg.chart rect.segment").forEach(function (mark) {
    if (!mark.querySelector(":scope > title")) return;
    mark.setAttribute("tabindex", "0");
    mark.addEventListener("focus", function () { showTip(mark); });
    mark.addEventListener("blur", hideTip);
  });
  /* A tap picks the nearest point within a fingertip (points are small and may overlap). */
  var REACH = 24;
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    svg.addEventListener("click", function (event) {
      var best = null, bestDistance = REACH;
      svg.querySelectorAll("circle, rect.segment").forEach(function (mark) {
        var box = mark.getBoundingClientRect();
        var dx = Math.max(box.left - event.clientX, 0, event.clientX - box.right);
        var dy = Math.max(box.top - event.clientY, 0, event.clientY - box.bottom);
        var distance = Math.sqrt(dx * dx + dy * dy);
        if (distance <= bestDistance) { best = mark; bestDistance = distance; }
      });
      if (best) { event.stopPropagation(); showTip(best); }
    });
  });
  document.querySelectorAll("td.price .usd[title]").forEach(function (price) {
    price.setAttribute("data-tip-text", price.getAttribute("title"));
    price.setAttribute("tabindex", "0");
    price.addEventListener("click", function (event) { event.stopPropagation(); showTip(price); });
    price.addEventListener("focus", function () { showTip(price); });
    price.addEventListener("blur", hideTip);
  });
  document.addEventListener("click", hideTip);
  window.addEventListener("resize", hideTip);

  /* Tables marked data-sortable: the headings sort the rows in place (numbers as numbers). */
  /* A cell's sort value: its data-sort attribute (a number, or empty for none), else its text. */
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return null;
    var raw = cell.getAttribute("data-sort");
    if (raw === null) return cell.textContent.trim().toLowerCase() || null;
    if (raw === "") return null;
    var number = Number(raw);
    return isNaN(number) ? raw.toLowerCase() : number;
  }
  document.querySelectorAll("table[data-sortable]").forEach(function (table) {
    var body = table.tBodies[0];
    if (!body || !table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      if (th.querySelector("a, button") || th.hasAttribute("data-nosort")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          if (x === null && y === null) return 0;
          if (x === null) return 1;
          if (y === null) return -1;
          var order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });

  /* A filter box above a table hides the rows that do not contain every word typed. */
  document.querySelectorAll("input[data-filter-table]").forEach(function (input) {
    var table = document.getElementById(input.getAttribute("data-filter-table"));
    var count = document.getElementById(input.getAttribute("data-filter-count"));
    if (!table) return;
    var box = input.closest(".table-filter");
    if (box) box.hidden = false;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        var match = words.every(function (word) { return text.indexOf(word) !== -1; });
        row.hidden = !match;
        if (match) shown += 1;
      });
      if (count) count.textContent = String(shown);
    });
  });

  /* Forms marked data-compact-url send only the fields that hold a value, so the address of
     the result (a link to share) is short. Without this the server redirects to that address. */
  document.querySelectorAll("form[data-compact-url]").forEach(function (form) {
    form.addEventListener("submit", function () {
      form.querySelectorAll("input, select").forEach(function (input) {
        if (input.type === "checkbox" || input.type === "radio" || input.type === "submit") return;
        if (input.multiple ? input.selectedOptions.length === 0 : !String(input.value).trim()) {
          input.disabled = true;
        }
      });
      /* Enabled again after the submission is built, for when the page is kept (back button). */
      window.setTimeout(function () {
        form.querySelectorAll("input:disabled, select:disabled").forEach(function (input) { input.disabled = false; });
      }, 0);
    });
  });

  /* Compare: the button says how many rows are ticked and is off until one is. */
  var compareForm = document.getElementById("compare-form");
  if (compareForm) {
    var button = document.getElementById("compare-submit");
    var label = button.textContent;
    var boxes = document.querySelectorAll("input[form=compare-form][name=offer]");
    var limit = parseInt(compareForm.getAttribute("data-max") || "8", 10);
    var update = function () {
      var ticked = Array.prototype.filter.call(boxes, function (box) { return box.checked; }).length;
      button.disabled = ticked === 0;
      button.textContent = ticked ? label + " (" + ticked + ")" : label;
      Array.prototype.forEach.call(boxes, function (box) { box.disabled = !box.checked && ticked >= limit; });
    };
    Array.prototype.forEach.call(boxes, function (box) { box.addEventListener("change", update); });
    update();
  }
})();
