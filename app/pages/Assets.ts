import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { WebAsset } from "./generated/WebAssets.js"

/**
 * The pages' only stylesheet and only script, served from our own origin so the Content-Security-Policy
 * can refuse every inline style and script. Mobile first: one column, tables become stacked rows on a phone.
 */
const SITE_CSS = `
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d8dee4;--bg:#fff;--soft:#f6f8fa;--accent:#0b5fff;--ok:#116329;--bad:#b42318}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0;line-height:1.5;font-size:16px}
main,footer,.top{max-width:60rem;margin:0 auto;padding:0 1rem}
.top{display:flex;justify-content:space-between;align-items:center;gap:1rem;padding-top:.75rem;padding-bottom:.75rem;border-bottom:1px solid var(--line)}
.brand{font-weight:700;text-decoration:none;color:var(--fg)}
.who{color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.85rem;margin-top:3rem;border-top:1px solid var(--line)}
a{color:var(--accent)}
h1{font-size:1.6rem;line-height:1.25;overflow-wrap:anywhere;margin:1.25rem 0 .5rem}
h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.25rem 0 .25rem}
.lede{font-size:1.1rem;color:var(--muted);margin-top:0}
.tagline{font-size:1.15rem;font-style:italic;overflow-wrap:anywhere}
.facts{display:flex;flex-wrap:wrap;gap:.4rem;padding:0;margin:.5rem 0;list-style:none}
.facts li{background:var(--soft);border:1px solid var(--line);border-radius:1rem;padding:.1rem .6rem;font-size:.9rem}
.price{font-size:1.4rem;font-weight:700}
.ok{color:var(--ok)}.bad{color:var(--bad)}.muted{color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88rem}
code{overflow-wrap:anywhere;background:var(--soft);padding:0 .2rem;border-radius:.2rem}
pre{background:var(--soft);border:1px solid var(--line);border-radius:.4rem;padding:.75rem;overflow-x:auto;max-width:100%;clear:both}
pre code{background:none;padding:0;overflow-wrap:normal}
.url{display:block;word-break:break-all;margin:.2rem 0 .6rem}
.card{border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem;margin:.75rem 0;background:var(--bg)}
.card h3{margin-top:0;overflow-wrap:anywhere}
.notice{border-radius:.5rem;padding:.75rem 1rem;margin:1rem 0;border:1px solid}
.notice.ok{border-color:var(--ok);background:#eefbf1;color:var(--fg)}
.notice.error{border-color:var(--bad);background:#fff1f0;color:var(--fg)}
.secret{font-size:1rem;display:block;padding:.5rem;margin:.5rem 0;word-break:break-all;border:1px dashed var(--bad)}
form{margin:.5rem 0}
form.inline{display:inline-flex;flex-wrap:wrap;gap:.4rem;align-items:end;margin:.25rem .5rem .25rem 0}
label{display:block;font-size:.9rem;margin:.5rem 0 .2rem;color:var(--muted)}
input[type=text],input[type=email],input[type=url],input[type=password]{font:inherit;width:100%;max-width:32rem;padding:.5rem .6rem;border:1px solid #8c959f;border-radius:.35rem}
form.inline input{width:auto;max-width:12rem}
button{font:inherit;padding:.45rem .9rem;border-radius:.35rem;border:1px solid #24292f;background:#24292f;color:#fff;cursor:pointer;min-height:2.5rem}
a.button{display:inline-block;padding:.45rem .9rem;border-radius:.35rem;background:#24292f;color:#fff;text-decoration:none;font-weight:600}
button.secondary{background:var(--bg);color:var(--fg)}
button.danger{background:var(--bad);border-color:var(--bad)}
.copy{float:right;min-height:auto;padding:.15rem .5rem;font-size:.8rem;margin:.3rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td{overflow-wrap:anywhere}
td button{white-space:nowrap}
.danger-zone{margin-top:.5rem}
.danger-zone summary{cursor:pointer;color:var(--bad)}
.tree ul{list-style:none;padding-left:1.1rem;margin:0}
.tree>ul{padding-left:0}
.tree summary{cursor:pointer;font-weight:600}
.tree .size{color:var(--muted);font-size:.8rem;margin-left:.4rem}
.readme{border:1px solid var(--line);border-radius:.5rem;padding:0 1rem;overflow-wrap:anywhere;overflow-x:auto}
.readme img{max-width:100%}
.errors li{overflow-wrap:anywhere}
.search .filters{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.25rem 0 .5rem}
.search .filters input{width:auto;max-width:9rem}
.listing h3{display:flex;justify-content:space-between;gap:1rem}.listing .price{font-size:1.1rem}
@media (max-width:40rem){
  h1{font-size:1.35rem}
  table.stack thead{display:none}
  table.stack tr{display:block;border:1px solid var(--line);border-radius:.5rem;margin:.6rem 0;padding:.3rem .5rem}
  table.stack td{display:flex;gap:.75rem;justify-content:space-between;border:none;padding:.2rem 0}
  table.stack td::before{content:attr(data-label);color:var(--muted);font-size:.85rem;flex:none}
  form.inline input{max-width:9rem}
}
`

/** Progressive enhancement only: a Copy button beside each `[data-copy]` block. Pages work without it. */
const COPY_JS = `"use strict";
document.querySelectorAll("[data-copy]").forEach(function (block) {
  if (!navigator.clipboard) return;
  var button = document.createElement("button");
  button.type = "button";
  button.className = "copy secondary";
  button.textContent = "Copy";
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(block.textContent || "").then(
      function () { button.textContent = "Copied"; },
      function () { button.textContent = "Select to copy"; }
    );
  });
  block.parentNode.insertBefore(button, block);
});
`

const asset = (body: string, contentType: string) =>
  Effect.succeed(HttpServerResponse.text(body, {
    contentType,
    headers: { "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }
  }))

export const siteCss = asset(SITE_CSS, "text/css; charset=utf-8")
export const copyJs = asset(COPY_JS, "text/javascript; charset=utf-8")

/** The site's icon: an "r" on the accent colour, as SVG (every page names it; browsers ask for it anyway). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b5fff"/>` +
  `<path fill="#fff" d="M11 25V9h4v2.6c1.1-1.9 2.9-2.9 5.3-2.9h.7v4h-1c-3.1 0-5 1.6-5 4.9V25z"/></svg>`

/** `GET /favicon.svg`, and `/favicon.ico` for the clients that ask for that name without reading the page. */
export const favicon = asset(FAVICON_SVG, "image/svg+xml")

/**
 * A built asset (web/ through scripts/build-assets.mjs): its name carries its content hash, so a browser may
 * keep it forever; a new build is a new name, which the page that loads it names.
 */
export const immutableAsset = (a: WebAsset) =>
  Effect.succeed(HttpServerResponse.text(a.body, {
    contentType: a.contentType,
    headers: { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
  }))
