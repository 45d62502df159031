/* Ricochet Robots on any page: every element with data-ricochet="daily" (or a
   puzzle's code) becomes the embeddable puzzle, in an iframe of the site this
   script came from.  data-lang (en, de, ru) and data-theme (auto, light, dark)
   choose its language and look.  The frame grows to the height it needs, and
   each of its messages is dispatched on the element as a bubbling CustomEvent
   "ricochet:<type>" (ready, moves, solved, revealed, resize) whose detail is the
   message.  Include it as <script src="https://<site>/static/embed.js" defer>. */
(function () {
  "use strict";
  var script = document.currentScript;
  var origin = new URL(script.src).origin;

  function mount(el) {
    if (el.dataset.ricochetMounted) return;
    el.dataset.ricochetMounted = "1";
    var what = el.getAttribute("data-ricochet") || "daily";
    var query = [];
    if (el.dataset.lang) query.push("lang=" + encodeURIComponent(el.dataset.lang));
    if (el.dataset.theme) query.push("theme=" + encodeURIComponent(el.dataset.theme));
    var frame = document.createElement("iframe");
    frame.src = origin + "/embed/" + (what === "daily" ? "daily" : encodeURIComponent(what)) +
      (query.length ? "?" + query.join("&") : "");
    frame.title = el.dataset.title || "Ricochet Robots puzzle";
    frame.setAttribute("allow", "clipboard-write");
    frame.setAttribute("loading", "lazy");
    frame.style.cssText = "display:block;width:100%;max-width:720px;border:0;height:" +
      Math.round((el.clientWidth || 480) + 170) + "px";
    el.replaceChildren(frame);
    window.addEventListener("message", function (event) {
      var data = event.data;
      if (event.origin !== origin || event.source !== frame.contentWindow || !data || data.source !== "ricochet") return;
      if (data.type === "resize" && data.height > 0) frame.style.height = Math.min(data.height, 4000) + "px";
      el.dispatchEvent(new CustomEvent("ricochet:" + data.type, { detail: data, bubbles: true }));
    });
  }

  function mountAll() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-ricochet]"), mount);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
