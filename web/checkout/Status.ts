/*
 * The one place the page tells the person what is happening. Built with DOM nodes and textContent only:
 * the page's CSP enforces Trusted Types, so no HTML string ever reaches the document.
 */

export type State =
  | "working"
  | "no-wallet"
  | "declined"
  | "wrong-network"
  | "refused"
  | "pending"
  | "no-answer"
  | "paid"
  | "download-failed"
  | "error"

type Part = string | Node

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: ReadonlyArray<Part>) => {
  const node = Object.assign(document.createElement(tag), props)
  node.append(...children)
  return node
}

export const link = (href: string, text: string, download = false): HTMLAnchorElement => {
  const a = el("a", { href }, text)
  if (download) a.setAttribute("download", "")
  return a
}

export const button = (text: string, onClick: () => void, className = ""): HTMLButtonElement => {
  const b = el("button", { type: "button", className }, text)
  b.addEventListener("click", onClick)
  return b
}

const TONE: Readonly<Record<State, "info" | "ok" | "error">> = {
  working: "info",
  "no-wallet": "error",
  declined: "error",
  "wrong-network": "error",
  refused: "error",
  pending: "info",
  "no-answer": "error",
  paid: "ok",
  "download-failed": "error",
  error: "error"
}

export interface StatusBox {
  /** Replaces the message; `focus` moves keyboard focus there (a final outcome). */
  readonly show: (state: State, parts: ReadonlyArray<Part>, actions?: ReadonlyArray<HTMLElement>, focus?: boolean) => void
}

export const statusBox = (box: HTMLElement): StatusBox => ({
  show: (state, parts, actions = [], focus = false) => {
    box.dataset["state"] = state
    box.className = `status notice ${TONE[state]}`
    box.hidden = false
    box.replaceChildren(el("p", {}, ...parts), ...(actions.length === 0 ? [] : [el("p", { className: "actions" }, ...actions)]))
    box.setAttribute("role", TONE[state] === "error" ? "alert" : "status")
    if (focus) box.focus()
  }
})

export { el }
