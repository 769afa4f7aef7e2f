// pinboard's only script: endless scroll on pin grids, and confirmations for deletes.
// Without it, the "More" link and plain forms still work.
(function () {
  "use strict";

  // A link <a data-more="#target" href="?cursor=..."> loads the next page of pins
  // (as ?partial=1: one .grid chunk whose data-next holds the next cursor) when it
  // scrolls into view, and appends the chunk to the target. data-chunk names another
  // kind of chunk (".boards", ".people": the search page's other tabs).
  function endlessScroll(more) {
    const target = document.querySelector(more.dataset.more);
    if (!target || !("IntersectionObserver" in window)) return;
    let loading = false;
    const observer = new IntersectionObserver(async function (entries) {
      if (loading || !entries.some((entry) => entry.isIntersecting)) return;
      loading = true;
      const url = new URL(more.href);
      url.searchParams.set("partial", "1");
      try {
        const response = await fetch(url, { credentials: "same-origin" });
        if (!response.ok) throw new Error("HTTP " + response.status);
        const template = document.createElement("template");
        template.innerHTML = await response.text();
        const chunk = template.content.querySelector(more.dataset.chunk || ".grid");
        if (!chunk) throw new Error("no chunk of results in the response");
        target.append(chunk);
        if (chunk.dataset.next) {
          url.searchParams.set("cursor", chunk.dataset.next);
          url.searchParams.delete("partial");
          more.href = url.toString();
          observer.unobserve(more); // re-observing reports the sentinel again if still in view
          observer.observe(more);
        } else {
          observer.disconnect();
          more.remove();
        }
      } catch (error) {
        observer.disconnect(); // leave the link for a click
      } finally {
        loading = false;
      }
    }, { rootMargin: "800px 0px" });
    observer.observe(more);
  }

  document.querySelectorAll("a[data-more]").forEach(endlessScroll);

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });
})();
