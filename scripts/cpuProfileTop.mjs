#!/usr/bin/env node
/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package/file, and the total
 * ("inclusive") time of the functions whose name or file matches --focus.
 *
 *   node scripts/cpuProfileTop.mjs PROFILE.cpuprofile [--top 40] [--focus regex]
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string", default: "40" }, focus: { type: "string" } } })
const top = Number.parseInt(values.top, 10)
const profile = JSON.parse(readFileSync(positionals[0], "utf8"))
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const selfUs = new Map()
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt)
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
const where = (cf) => {
  const url = cf.url ?? ""
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (m) return m[1]
  if (url.startsWith("node:")) return url
  if (url === "") return "(native)"
  return url.replace(/^file:\/\/.*?\/(work\/main|ciclone)\//, "")
}
const add = (map, key, v) => map.set(key, (map.get(key) ?? 0) + v)
const byFn = new Map()
const byPlace = new Map()
for (const [id, us] of selfUs) {
  const cf = nodes.get(id).callFrame
  add(byFn, `${cf.functionName || "(anonymous)"}  ${where(cf)}:${cf.lineNumber + 1}`, us)
  add(byPlace, where(cf), us)
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms`
const print = (title, map) => {
  console.log(`\n## ${title}`)
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`)
}
console.log(`total sampled: ${(total / 1000).toFixed(0)} ms`)
print("self time by package / file", byPlace)
print("self time by function", byFn)
if (values.focus !== undefined) {
  const re = new RegExp(values.focus)
  const incl = new Map()
  for (const [id, us] of selfUs) {
    const seen = new Set()
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const cf = nodes.get(n).callFrame
      const key = `${cf.functionName || "(anonymous)"}  ${where(cf)}:${cf.lineNumber + 1}`
      if (!seen.has(key) && re.test(key)) { seen.add(key); add(incl, key, us) }
    }
  }
  print(`inclusive time of functions matching /${values.focus}/`, incl)
}
