// Opens the scenario source where an expectation's file:line link points, and filters the index.
(function () {
  function openTarget() {
    var id = window.location.hash.slice(1);
    if (!id) { return; }
    var el = document.getElementById(id);
    if (!el) { return; }
    var d = el.closest("details");
    if (d) { d.open = true; }
    el.scrollIntoView({block: "center"});
  }
  window.addEventListener("hashchange", openTarget);
  document.addEventListener("DOMContentLoaded", function () {
    openTarget();
    var box = document.getElementById("filter");
    if (!box) { return; }
    box.addEventListener("input", function () {
      var q = box.value.toLowerCase();
      document.querySelectorAll("tr[data-search]").forEach(function (tr) {
        tr.style.display = tr.getAttribute("data-search").indexOf(q) >= 0 ? "" : "none";
      });
    });
  });
})();
