extension HTMLPage {
    /// The page's only script: sorting and filtering tables, zooming the treemap, hover details. It reads
    /// the numbers from `data-v` attributes the renderer wrote (exact bytes), so sorting never parses labels.
    static let script = """
        (function(){
        "use strict";
        function cellValue(row, col){
          var cell = row.cells[col]; if(!cell) return "";
          var v = cell.getAttribute("data-v");
          return v === null ? cell.textContent.trim().toLowerCase() : Number(v);
        }
        document.querySelectorAll("table.sortable").forEach(function(table){
          var heads = table.tHead ? table.tHead.rows[0].cells : [];
          Array.prototype.forEach.call(heads, function(th, col){
            var button = th.querySelector("button"); if(!button) return;
            button.addEventListener("click", function(){
              var descending = th.getAttribute("aria-sort") !== "descending";
              Array.prototype.forEach.call(heads, function(h){ h.removeAttribute("aria-sort"); });
              th.setAttribute("aria-sort", descending ? "descending" : "ascending");
              var body = table.tBodies[0];
              var rows = Array.prototype.filter.call(body.rows, function(r){ return !r.classList.contains("other"); });
              var pinned = Array.prototype.filter.call(body.rows, function(r){ return r.classList.contains("other"); });
              rows.sort(function(a, b){
                var x = cellValue(a, col), y = cellValue(b, col);
                var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
                if(c === 0) c = Number(a.getAttribute("data-rank")) - Number(b.getAttribute("data-rank"));
                else if(descending) c = -c;
                return c;
              });
              rows.concat(pinned).forEach(function(r){ body.appendChild(r); });
            });
          });
        });
        var filter = document.getElementById("filter");
        if(filter){
          var table = document.getElementById(filter.getAttribute("aria-controls"));
          var shown = document.getElementById("shown");
          var apply = function(){
            var q = filter.value.trim().toLowerCase(), n = 0;
            Array.prototype.forEach.call(table.tBodies[0].rows, function(r){
              var hit = r.classList.contains("other") ? q === "" : (r.getAttribute("data-key") || "").indexOf(q) >= 0;
              r.hidden = !hit; if(hit && !r.classList.contains("other")) n++;
            });
            if(shown) shown.textContent = String(n);
          };
          filter.addEventListener("input", apply);
        }
        var tm = document.getElementById("treemap");
        if(tm){
          var details = document.getElementById("tm-details");
          var back = document.getElementById("tm-back");
          var all = document.getElementById("tm-all");
          var show = function(id){
            tm.querySelectorAll(".tm-view").forEach(function(g){ g.style.display = g.id === id ? "" : "none"; });
            if(back) back.hidden = id === "tm-all";
          };
          var tip = function(e){
            var t = e.target.closest ? e.target.closest("[data-tip]") : null;
            if(t && details) details.textContent = t.getAttribute("data-tip");
          };
          tm.addEventListener("mouseover", tip);
          tm.addEventListener("focusin", tip);
          var zoom = function(e){
            var t = e.target.closest ? e.target.closest("[data-zoom]") : null;
            if(t && all && all.style.display !== "none") show(t.getAttribute("data-zoom"));
          };
          tm.addEventListener("click", zoom);
          tm.addEventListener("keydown", function(e){ if(e.key === "Enter" || e.key === " "){ e.preventDefault(); zoom(e); } });
          if(back) back.addEventListener("click", function(){ show("tm-all"); });
        }
        })();

        """
}
