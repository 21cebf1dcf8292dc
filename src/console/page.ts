// The console's HTML shell and stylesheet. No CDN, no web fonts: the page, one script and one
// stylesheet, all from this server.
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cardflow console</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/console.js"></script>
</head>
<body>
<div id="app"><noscript>The cardflow console needs JavaScript.</noscript></div>
</body>
</html>
`;

export const CONSOLE_CSS = `
:root { --ink:#1d2433; --muted:#5b6475; --line:#d9dee7; --bg:#f6f7f9; --accent:#d9480f; --link:#1c5fb8; --ok:#1b7f3b; --bad:#b42318; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--link); }
code { word-break: break-all; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; z-index: 1; }
header { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; padding: 10px 16px; background: var(--ink); color: #fff; }
header a { color: #fff; } header .brand { font-weight: 700; }
header nav { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; margin-right: auto; }
header nav a[aria-current="page"] { text-decoration-thickness: 3px; text-underline-offset: 5px; }
header .who { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; }
header button { background: transparent; color: #fff; border: 1px solid #fff8; }
.live { font-size: .8rem; padding: 1px 8px; border-radius: 10px; background: #ffffff22; }
.live.open::before { content: "● "; color: #6ee29a; } .live.reconnecting::before, .live.stopped::before { content: "● "; color: #ffb4a8; }
main { max-width: 1240px; margin: 0 auto; padding: 16px; overflow-wrap: anywhere; /* ids and references as long as the API takes them wrap (inherited) */ }
main:focus { outline: none; }
h1 { font-size: 1.4rem; margin: 8px 0 16px; } h2 { font-size: 1.1rem; margin: 24px 0 8px; }
.crumbs { margin: 4px 0 0; font-size: .9rem; }
section.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 16px; }
section.card > h2:first-child { margin-top: 4px; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
form.row, form.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: end; margin-bottom: 12px; }
form.filters .buttons { display: flex; gap: 12px; align-items: center; }
form.filters .hint { flex-basis: 100%; margin: 0; }
label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: 2px; }
input, select, button { font: inherit; padding: 6px 10px; border: 1px solid #8a94a6; border-radius: 6px; min-height: 40px; max-width: 100%; }
input, select { background: #fff; color: var(--ink); }
input[aria-invalid="true"] { border-color: var(--bad); border-width: 2px; }
.field-problem { color: var(--bad); margin: 4px 0 0; font-size: .9rem; flex-basis: 100%; }
button { background: var(--ink); color: #fff; border-color: var(--ink); cursor: pointer; }
button.secondary { background: #fff; color: var(--ink); border-color: #8a94a6; }
button:disabled, button[aria-disabled="true"] { opacity: .5; cursor: not-allowed; }
.busy { opacity: .6; transition: opacity .2s; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; background: #fff; }
caption { text-align: left; color: var(--muted); padding: 4px 0; caption-side: top; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; }
.amount { white-space: nowrap; }
.ref { display: block; }
.status { justify-self: start; display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e8ecf3; font-size: .85rem; white-space: nowrap; }
.status.succeeded { background: #dcf5e3; color: #14622e; } .status.error, .status.canceled { background: #fde4e1; color: #8f1c13; }
.status.requires_capture, .status.capture_requested, .status.payment_method_requested { background: #fff0d9; color: #7a4300; }
dl.amounts { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 8px 16px; margin: 0 0 12px; }
dl.amounts div { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
dl.amounts dt { color: var(--muted); font-size: .85rem; } dl.amounts dd { margin: 0; font-size: 1.1rem; font-variant-numeric: tabular-nums; }
dl.record { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.record dt { color: var(--muted); } dl.record dd { margin: 0; }
.alert { border: 1px solid var(--bad); background: #fff5f4; color: var(--bad); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.alert .meta, .muted { color: var(--muted); font-size: .85rem; }
.notice { border: 1px solid var(--ok); background: #f2fbf4; color: #14622e; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.verdict.intact { color: var(--ok); font-weight: 600; } .verdict.broken { color: var(--bad); font-weight: 600; }
.zoom { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
figure { margin: 0; }
.diagram { position: relative; overflow: hidden; height: min(70vh, 640px); border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: grab; touch-action: none; }
.diagram:active { cursor: grabbing; }
.diagram .canvas { position: absolute; left: 0; top: 0; transform-origin: 0 0; }
.actions { display: flex; flex-wrap: wrap; gap: 12px 24px; }
.actions form { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; }
.pager { display: flex; gap: 16px; align-items: center; margin-top: 8px; }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: min(480px, 92vw); }
dialog::backdrop { background: #0006; }
.signin { max-width: 420px; margin: 10vh auto; }
.signin form { display: flex; flex-direction: column; gap: 12px; }
@media (max-width: 720px) {
  main { padding: 10px; }
  form.row label, form.filters label, .actions form label { flex: 1 1 100%; min-width: 0; }
  form.row input, form.row select, form.filters input, form.filters select, .actions input { width: 100%; }
  dl.record { grid-template-columns: 1fr; } dl.record dd { margin-bottom: 6px; }
  /* tables become one labelled block per row: every column, money included, without sideways scrolling */
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr { border: 1px solid var(--line); border-radius: 6px; margin-bottom: 8px; padding: 4px 0; }
  table.stack td { display: grid; grid-template-columns: 7.5em 1fr; gap: 8px; border: 0; padding: 3px 10px; }
  table.stack td::before { content: attr(data-label); color: var(--muted); font-size: .85rem; }
  table.stack caption { display: block; }
}
`;
