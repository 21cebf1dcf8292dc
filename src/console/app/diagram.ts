// The payment machine's diagram on a payment's page: the compact layout (top to bottom, guards on
// hover), fitted to the width at first, then zoom (buttons, keys + and -, Ctrl+wheel or pinch)
// and pan (drag, arrow keys), and a button that frames the payment's own path.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./ui.js";

type View = { scale: number; x: number; y: number };
const MIN = 0.2;
const MAX = 4;
const clamp = (scale: number) => Math.min(MAX, Math.max(MIN, scale));

/** The SVG's own size (its viewBox), in CSS pixels. */
function sizeOf(svg: SVGSVGElement): { width: number; height: number } {
  const box = svg.viewBox.baseVal;
  return box && box.width ? { width: box.width, height: box.height } : { width: svg.clientWidth, height: svg.clientHeight };
}

export function Diagram({ svg, paymentId }: { svg: string; paymentId: string }) {
  const frame = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<View>({ scale: 1, x: 0, y: 0 });
  const drag = useRef<{ x: number; y: number; view: View } | null>(null);

  const svgEl = () => frame.current?.querySelector("svg") ?? null;
  /** Frames a box of the drawing (its coordinates) in the frame, at most at natural size. */
  function frameBox(box: { x: number; y: number; width: number; height: number }, pad = 16) {
    const el = frame.current;
    if (!el) return;
    const scale = clamp(Math.min((el.clientWidth - 2 * pad) / box.width, (el.clientHeight - 2 * pad) / box.height, 1.5));
    setView({ scale, x: (el.clientWidth - box.width * scale) / 2 - box.x * scale, y: (el.clientHeight - box.height * scale) / 2 - box.y * scale });
  }
  const fit = () => {
    const el = svgEl();
    if (el) frameBox({ x: 0, y: 0, ...sizeOf(el) });
  };
  /** The highlighted states and arrows: the payment's path. */
  function framePath() {
    const el = svgEl();
    if (!el) return;
    const parts = [...el.querySelectorAll<SVGGraphicsElement>('g.node:has([fill="#ffe8cc"]), g.edge:has([stroke="#d9480f"])')];
    if (parts.length === 0) return fit();
    const root = el.getBoundingClientRect();
    const current = view.scale;
    const boxes = parts.map((p) => p.getBoundingClientRect());
    const left = Math.min(...boxes.map((b) => b.left)), top = Math.min(...boxes.map((b) => b.top));
    const right = Math.max(...boxes.map((b) => b.right)), bottom = Math.max(...boxes.map((b) => b.bottom));
    frameBox({ x: (left - root.left) / current, y: (top - root.top) / current, width: (right - left) / current, height: (bottom - top) / current });
  }
  function zoom(factor: number, at?: { x: number; y: number }) {
    const el = frame.current;
    if (!el) return;
    const point = at ?? { x: el.clientWidth / 2, y: el.clientHeight / 2 };
    setView((v) => {
      const scale = clamp(v.scale * factor);
      const k = scale / v.scale;
      return { scale, x: point.x - (point.x - v.x) * k, y: point.y - (point.y - v.y) * k };
    });
  }
  const pan = (dx: number, dy: number) => setView((v) => ({ ...v, x: v.x + dx, y: v.y + dy }));

  useEffect(() => {
    const el = svgEl();
    if (!el) return;
    const { width, height } = sizeOf(el);
    el.setAttribute("width", String(width));
    el.setAttribute("height", String(height));
    fit();
    const refit = () => fit();
    addEventListener("resize", refit);
    return () => removeEventListener("resize", refit);
  }, [svg]);

  const onKey = (e: KeyboardEvent) => {
    const step = 40;
    const keys: Record<string, () => void> = { "+": () => zoom(1.25), "=": () => zoom(1.25), "-": () => zoom(0.8), "0": fit, ArrowLeft: () => pan(step, 0), ArrowRight: () => pan(-step, 0), ArrowUp: () => pan(0, step), ArrowDown: () => pan(0, -step) };
    const run = keys[e.key];
    if (run) (e.preventDefault(), run());
  };
  const onWheel = (e: WheelEvent) => {
    if (!e.ctrlKey) return; // a plain wheel scrolls the page; Ctrl+wheel (and a trackpad's pinch) zooms
    e.preventDefault();
    const rect = frame.current!.getBoundingClientRect();
    zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, { x: e.clientX - rect.left, y: e.clientY - rect.top });
  };
  const onDown = (e: PointerEvent) => {
    drag.current = { x: e.clientX, y: e.clientY, view };
    (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
  };
  const onMove = (e: PointerEvent) => {
    const d = drag.current;
    if (d) setView({ ...d.view, x: d.view.x + e.clientX - d.x, y: d.view.y + e.clientY - d.y });
  };
  const onUp = () => void (drag.current = null);

  return html`<section class="card" aria-labelledby="diagram-h">
    <h2 id="diagram-h">Path through the payment machine</h2>
    <div class="zoom" role="toolbar" aria-label="Diagram view">
      <button type="button" class="secondary" onClick=${() => zoom(1.25)} aria-label="Zoom in">+</button>
      <button type="button" class="secondary" onClick=${() => zoom(0.8)} aria-label="Zoom out">−</button>
      <button type="button" class="secondary" onClick=${fit}>Fit</button>
      <button type="button" class="secondary" onClick=${framePath}>This payment's path</button>
      <span class="muted" data-testid="zoom">${Math.round(view.scale * 100)} %</span>
    </div>
    <figure>
      <div class="diagram" ref=${frame} tabindex="0" role="img" aria-label=${`The payment machine's states and transitions; the path of ${paymentId} is highlighted and its steps numbered. Drag or use the arrow keys to move, + and - to zoom.`}
        onKeyDown=${onKey} onWheel=${onWheel} onPointerDown=${onDown} onPointerMove=${onMove} onPointerUp=${onUp} onPointerCancel=${onUp} data-testid="diagram">
        <div class="canvas" style=${`transform: translate(${view.x}px, ${view.y}px) scale(${view.scale})`} dangerouslySetInnerHTML=${{ __html: svg }}></div>
      </div>
      <figcaption class="muted">Every state of the machine, each arrow with the events that take it (its guards on hover); this payment's path is highlighted and its steps numbered. The full diagram with guards: <code>cardflow diagram --payment ${paymentId}</code>.</figcaption>
    </figure>
  </section>`;
}
