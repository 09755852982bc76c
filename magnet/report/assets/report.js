/* magnet report: draws the embedded figures; a design's figures when it is opened. */
(function () {
  "use strict";

  var figures = Magnet.readJSON("magnet-figures") || {};

  function openDesign(number) {
    var box = document.getElementById("design-" + number);
    if (!box) return false;
    box.open = true;
    box.scrollIntoView({ behavior: "smooth", block: "start" });
    return true;
  }

  document.querySelectorAll("details.design").forEach(function (box) {
    box.addEventListener("toggle", function () {
      if (box.open) Magnet.renderPlots(box, figures);
    });
  });

  var top = document.getElementById("study-plots");
  Magnet.renderPlots(top, figures, function (el) {
    if (el.hasAttribute("data-clickable")) Magnet.onDesignClick(el, openDesign);
  }).then(function () {
    document.body.setAttribute("data-ready", "1");
  });
  Magnet.tables(document);
  if (location.hash.indexOf("#design-") === 0) openDesign(location.hash.slice(8));
})();
