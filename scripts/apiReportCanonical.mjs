// API Extractor writes a type's union members in the order the compiler happened to create them, and that order
// differs between two builds of the same sources (another checkout, another file-system order): the same
// surface then reads as a change. The reports are kept canonical instead: union members inside any type
// argument, parameter list or object type sorted, and each run of "forgotten export" warnings sorted.
// Unions written at the top of a line (`export type X = A | B`) keep their declared order.

const OPEN = { "<": ">", "(": ")", "[": "]", "{": "}" }
const CLOSERS = new Set(Object.values(OPEN))

/** Index just past a quoted string starting at `i`. */
const skipQuoted = (s, i) => {
  const q = s[i]
  let j = i + 1
  while (j < s.length && s[j] !== q) j += s[j] === "\\" ? 2 : 1
  return j + 1
}

/** Splits `s` on `sep` where it is at bracket depth 0 and outside quotes. */
const splitTop = (s, sep) => {
  const parts = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === "'" || c === '"' || c === "`") {
      i = skipQuoted(s, i) - 1
    } else if (c in OPEN) {
      depth++
    } else if (CLOSERS.has(c) && !(c === ">" && s[i - 1] === "=")) {
      depth--
    } else if (depth === 0 && c === sep) {
      parts.push(s.slice(start, i))
      start = i + 1
    }
  }
  parts.push(s.slice(start))
  return parts
}

/** A union's members sorted; left alone when a member is a function type (`=>` would take the rest along). */
const union = (s) => {
  const alternatives = splitTop(s, "|")
  if (alternatives.length < 2 || alternatives.some((a) => a.includes("=>"))) return atoms(s)
  const lead = s.match(/^\s*/)[0]
  const trail = s.match(/\s*$/)[0]
  return lead + alternatives.map((a) => atoms(a).trim()).sort().join(" | ") + trail
}

/**
 * The contents of one bracket group: each part's union sorted, recursively (parts are separated by `,` in
 * argument and parameter lists, `;` in object types). A part `name: T` (a parameter or a property) sorts
 * the union in `T` only.
 */
const group = (inner) =>
  splitTop(inner, ",").map((listed) =>
    splitTop(listed, ";").map((part) => {
      const [head, ...rest] = splitTop(part, ":")
      if (rest.length === 0) return union(part)
      return atoms(head) + ":" + union(rest.join(":"))
    }).join(";")
  ).join(",")

/** Text with every bracket group's contents made canonical. */
const atoms = (s) => {
  let out = ""
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === "'" || c === '"' || c === "`") {
      const end = skipQuoted(s, i)
      out += s.slice(i, end)
      i = end - 1
    } else if (c in OPEN && !(c === ">" && s[i - 1] === "=")) {
      let depth = 1
      let j = i + 1
      for (; j < s.length && depth > 0; j++) {
        const d = s[j]
        if (d === "'" || d === '"' || d === "`") j = skipQuoted(s, j) - 1
        else if (d in OPEN) depth++
        else if (CLOSERS.has(d) && !(d === ">" && s[j - 1] === "=")) depth--
      }
      if (depth !== 0) return out + s.slice(i) // unbalanced (prose in a comment): leave the rest as it is
      out += c + group(s.slice(i + 1, j - 1)) + s[j - 1]
      i = j - 1
    } else {
      out += c
    }
  }
  return out
}

const WARNING = "// Warning: (ae-forgotten-export)"

/** The canonical form of a report. */
/**
 * TypeScript names the base of `class X extends Context.Tag(...)<...>() {}` (and of every class built by a factory:
 * `Data.TaggedError`, `Schema.Class`, `Effect.Service`) `X_base` in the declarations it emits, and API Extractor
 * asks for `X_base` to be exported. It is no type a consumer names: `X` is the export, and its report entry shows
 * the base it extends. Those warnings are dropped when `X` itself is declared in the report; every other forgotten
 * export stays in the report and fails the check (see `forgottenExports`).
 */
const SYNTHESIZED_BASE = /\(ae-forgotten-export\) The symbol "(\w+)_base" needs to be exported/

/** The forgotten-export warnings left in a canonical report: each is a type reachable from an entry but not exported. */
export const forgottenExports = (report) => report.split("\n").filter((l) => l.includes("(ae-forgotten-export)"))

export const canonicalReport = (text) => {
  const declared = new Set([...text.matchAll(/^export (?:declare )?(?:abstract )?class (\w+)/gm)].map((m) => m[1]))
  const lines = text.split("\n").filter((l) => {
    const base = SYNTHESIZED_BASE.exec(l)
    return base === null || !declared.has(base[1])
  })
  const out = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith(WARNING)) {
      let j = i
      while (j < lines.length && lines[j].startsWith(WARNING)) j++
      out.push(...lines.slice(i, j).sort())
      i = j - 1
    } else {
      out.push(lines[i].startsWith("//") ? lines[i] : atoms(lines[i]))
    }
  }
  return out.join("\n")
}
