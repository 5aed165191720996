import { describe, expect, it } from "vitest"
import { sitemapPages } from "../../domain/usecases/Sitemap.js"
import { sitemapFileXml, sitemapXml } from "../../app/pages/DiscoveryRoutes.js"

const d = (day: number) => new Date(Date.UTC(2026, 0, day))
const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!)

describe("sitemapPages", () => {
  it("lists each owner page once, dated by its newest listing, before its repo pages", () => {
    expect(sitemapPages([
      { owner: "Acme", name: "a", updatedAt: d(1) },
      { owner: "Acme", name: "b", updatedAt: d(5) },
      { owner: "zed", name: "c", updatedAt: d(2) }
    ])).toEqual([
      { path: "/r/Acme", lastModified: d(5) },
      { path: "/r/Acme/a", lastModified: d(1) },
      { path: "/r/Acme/b", lastModified: d(5) },
      { path: "/r/zed", lastModified: d(2) },
      { path: "/r/zed/c", lastModified: d(2) }
    ])
    expect(sitemapPages([])).toEqual([])
  })
})

describe("sitemap files", () => {
  const pages = [1, 2, 3, 4, 5].map((n) => ({ path: `/r/o/r${n}`, lastModified: d(n) }))
  const base = "https://market.example"

  it("fits in one urlset up to the per-file limit, with no numbered files", () => {
    expect(locs(sitemapXml(base, pages, 5))).toEqual(pages.map((p) => base + p.path))
    expect(sitemapXml(base, pages, 5)).toContain("<urlset ")
    expect(sitemapFileXml(base, pages, "1.xml", 5)).toBeNull()
  })

  it("past the limit becomes an index of numbered files that together hold every page once", () => {
    const index = sitemapXml(base, pages, 2)
    expect(index).toContain("<sitemapindex ")
    expect(locs(index)).toEqual([`${base}/sitemaps/1.xml`, `${base}/sitemaps/2.xml`, `${base}/sitemaps/3.xml`])
    expect(index).toContain(`<lastmod>${d(4).toISOString()}</lastmod>`)
    const all = ["1.xml", "2.xml", "3.xml"].flatMap((f) => locs(sitemapFileXml(base, pages, f, 2)!))
    expect(all).toEqual(pages.map((p) => base + p.path))
    for (const bad of ["4.xml", "0.xml", "1", "01.xml", "1.xml/..", "-1.xml", "9999999.xml"]) {
      expect(sitemapFileXml(base, pages, bad, 2), bad).toBeNull()
    }
  })
})
