// The least of a DOM that Preact renders into, for console pages rendered in Node (no browser,
// no jsdom): elements with attributes and children, text nodes, and `document` to make them.
// Events are recorded, not dispatched; styles are kept as given. What a test reads: `textOf`,
// and `elements` (by tag name).

class Node {
  parentNode: Element | null = null;
  get nextSibling(): Node | null {
    const siblings = this.parentNode?.childNodes ?? [];
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }
}

class Text extends Node {
  readonly nodeType = 3;
  constructor(public data: string) {
    super();
  }
}

class Element extends Node {
  readonly nodeType = 1;
  readonly childNodes: Node[] = [];
  readonly attributes = new Map<string, string>();
  readonly listeners = new Map<string, unknown>();
  readonly style: Record<string, unknown> = { setProperty: (name: string, value: string) => void (this.style[name] = value) };
  constructor(
    readonly localName: string,
    readonly namespaceURI = "http://www.w3.org/1999/xhtml",
  ) {
    super();
  }
  get firstChild(): Node | null {
    return this.childNodes[0] ?? null;
  }
  insertBefore(node: Node, before: Node | null): Node {
    node.parentNode?.removeChild(node);
    const at = before ? this.childNodes.indexOf(before) : -1;
    this.childNodes.splice(at < 0 ? this.childNodes.length : at, 0, node);
    node.parentNode = this;
    return node;
  }
  appendChild(node: Node): Node {
    return this.insertBefore(node, null);
  }
  removeChild(node: Node): Node {
    this.childNodes.splice(this.childNodes.indexOf(node), 1);
    node.parentNode = null;
    return node;
  }
  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value));
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }
  addEventListener(type: string, listener: unknown): void {
    this.listeners.set(type, listener);
  }
  removeEventListener(type: string): void {
    this.listeners.delete(type);
  }
}

export type { Element };

/** Sets `document` (this test file's worker only) and gives an element to render into. */
export function installDom(): Element {
  const doc = {
    createElementNS: (ns: string, name: string) => new Element(name, ns),
    createElement: (name: string) => new Element(name),
    createTextNode: (data: string) => new Text(String(data)),
  };
  Object.assign(globalThis, { document: doc });
  return doc.createElement("div");
}

/** The text of a node and its descendants, as textContent reads it. */
export const textOf = (node: Node): string => (node instanceof Text ? node.data : node instanceof Element ? node.childNodes.map(textOf).join("") : "");

/** The elements of a tag name under `root`, in document order. */
export function elements(root: Element, localName: string): Element[] {
  const found: Element[] = [];
  for (const child of root.childNodes) {
    if (!(child instanceof Element)) continue;
    if (child.localName === localName) found.push(child);
    found.push(...elements(child, localName));
  }
  return found;
}
