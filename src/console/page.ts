// The console's HTML shell and stylesheet. No CDN, no web fonts: the page, one script and one
// stylesheet, all from this server.
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cardflow console</title>
<link rel="stylesheet" href="/console/console.css">
<script type="module" src="/console/console.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
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
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; z-index: 1; }
header { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; padding: 10px 16px; background: var(--ink); color: #fff; }
header a { color: #fff; } header .brand { font-weight: 700; margin-right: auto; }
header nav { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; }
header button { background: transparent; color: #fff; border: 1px solid #fff8; }
main { max-width: 1100px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.4rem; margin: 8px 0 16px; word-break: break-all; } h2 { font-size: 1.1rem; margin: 24px 0 8px; }
section.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 16px; }
section.card > h2:first-child { margin-top: 4px; }
form.row { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: end; margin-bottom: 12px; }
label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: 2px; }
input, select, button { font: inherit; padding: 6px 10px; border: 1px solid var(--line); border-radius: 6px; min-height: 38px; }
input, select { background: #fff; color: var(--ink); }
button { background: var(--ink); color: #fff; border-color: var(--ink); cursor: pointer; }
button.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
button:disabled { opacity: .45; cursor: not-allowed; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
caption { text-align: left; color: var(--muted); padding: 4px 0; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
td.wrap { white-space: normal; word-break: break-all; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; background: #e8ecf3; font-size: .85rem; }
.status.succeeded { background: #dcf5e3; color: var(--ok); } .status.error, .status.canceled { background: #fde4e1; color: var(--bad); }
.status.requires_capture { background: #fff0d9; color: #8a4b00; }
dl.record { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.record dt { color: var(--muted); } dl.record dd { margin: 0; word-break: break-all; }
.alert { border: 1px solid var(--bad); background: #fff5f4; color: var(--bad); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.alert .meta, .muted { color: var(--muted); font-size: .85rem; }
.notice { border: 1px solid var(--ok); background: #f2fbf4; color: var(--ok); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.verdict.intact { color: var(--ok); font-weight: 600; } .verdict.broken { color: var(--bad); font-weight: 600; }
.diagram { overflow-x: auto; background: #fff; } .diagram svg { width: 2200px; height: auto; } /* the whole machine, left to right: scroll along it */
.actions { display: flex; flex-wrap: wrap; gap: 12px; }
.actions form { display: flex; gap: 8px; align-items: end; flex-wrap: wrap; }
.pager { display: flex; gap: 8px; align-items: center; margin-top: 8px; }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: min(480px, 92vw); }
dialog::backdrop { background: #0006; }
.signin { max-width: 420px; margin: 10vh auto; }
.signin form { display: flex; flex-direction: column; gap: 12px; }
@media (max-width: 640px) { main { padding: 10px; } th, td { padding: 5px 6px; } dl.record { grid-template-columns: 1fr; } dl.record dd { margin-bottom: 6px; } }
`;
