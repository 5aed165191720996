import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { nameSearchText, README_TEXT_LIMIT, readmeSearchText, topicsSearchText } from "../../domain/rules/SearchText.js"

/*
 * The text the catalog searches for a listing: a buyer typing "json" finds `FastJsonParser`, words of a README
 * are found without its markup, links' targets or images, and the README's opening is what is kept.
 */

describe("search text of a repo name", () => {
  it("a name made of one word is searched as itself, not repeated", () => {
    for (const name of ["widget", "parser2", "Widget", "ALLCAPS", "x"]) {
      expect(nameSearchText(name), name).toBe(name)
    }
  })

  it("a name in camel or Pascal case is also searched as its words", () => {
    expect(nameSearchText("FastJsonParser")).toBe("FastJsonParser Fast Json Parser")
    expect(nameSearchText("fastJson")).toBe("fastJson fast Json")
  })

  it("a word boundary is seen after any lowercase letter or digit, before any capital", () => {
    expect(nameSearchText("dataBase")).toBe("dataBase data Base")
    expect(nameSearchText("fizzBuzz")).toBe("fizzBuzz fizz Buzz")
    expect(nameSearchText("getAll")).toBe("getAll get All")
    expect(nameSearchText("fooZed")).toBe("fooZed foo Zed")
    expect(nameSearchText("v0Beta")).toBe("v0Beta v0 Beta")
    expect(nameSearchText("web9Kit")).toBe("web9Kit web9 Kit")
    expect(nameSearchText("mp3Tag")).toBe("mp3Tag mp3 Tag")
  })

  it("hyphens, underscores and dots separate words, however many in a row", () => {
    expect(nameSearchText("fast-json_parser")).toBe("fast-json_parser fast json parser")
    expect(nameSearchText("socket.io")).toBe("socket.io socket io")
    expect(nameSearchText("a--b__c..d")).toBe("a--b__c..d a b c d")
    expect(nameSearchText("a-_.b")).toBe("a-_.b a b")
    expect(nameSearchText("my-CoolTool")).toBe("my-CoolTool my Cool Tool")
  })

  it("an acronym is not split letter by letter", () => {
    expect(nameSearchText("HTTPServer")).toBe("HTTPServer")
    expect(nameSearchText("parseHTTP")).toBe("parseHTTP parse HTTP")
  })

  it("the name itself always leads, so an exact name still matches", () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/), (name) => {
      const text = nameSearchText(name)
      expect(text === name || text.startsWith(`${name} `)).toBe(true)
    }))
  })
})

describe("search text of a README", () => {
  it("plain text is kept, its whitespace collapsed to single spaces and trimmed", () => {
    expect(readmeSearchText("A fast\n\n  JSON\tparser.\r\n")).toBe("A fast JSON parser.")
    expect(readmeSearchText("   leading and trailing   ")).toBe("leading and trailing")
    expect(readmeSearchText("")).toBe("")
  })

  it("Markdown emphasis, headings, quotes, tables, code and strike-through marks are dropped, their words kept", () => {
    expect(readmeSearchText("# Title\n## Sub")).toBe("Title Sub")
    expect(readmeSearchText("**bold** and _em_ and `code`")).toBe("bold and em and code")
    expect(readmeSearchText("> quoted")).toBe("quoted")
    expect(readmeSearchText("| a | b |\n|---|---|")).toBe("a b --- ---")
    expect(readmeSearchText("~~old~~ ==marked== *x*")).toBe("old marked x")
    expect(readmeSearchText("Setup\n=====")).toBe("Setup")
  })

  it("a markup character inside a word separates it, so each part is found: snake_case, a|b, x=y", () => {
    expect(readmeSearchText("use snake_case and a|b or x=y, `inline`code")).toBe("use snake case and a b or x y, inline code")
  })

  it("HTML tags are dropped, their text kept", () => {
    expect(readmeSearchText("<p align=\"center\">Hello <b>world</b></p>")).toBe("Hello world")
    expect(readmeSearchText("a<br/>b")).toBe("a b")
  })

  it("HTML comments are dropped whole, even across lines or holding a >", () => {
    expect(readmeSearchText("before <!-- note: a > b --> after")).toBe("before after")
    expect(readmeSearchText("before <!-- line one\nline > two --> after")).toBe("before after")
    // Each comment ends at its own end: the words between two comments are kept.
    expect(readmeSearchText("a <!-- x > --> b <!-- y > --> c")).toBe("a b c")
    // A dropped comment still separates the words around it.
    expect(readmeSearchText("alpha<!-- hidden -->beta")).toBe("alpha beta")
  })

  it("images are dropped, alt text included (it is rarely about the repo)", () => {
    expect(readmeSearchText("![build status](https://ci.example/badge.svg) Parser")).toBe("Parser")
    expect(readmeSearchText("![](logo.png)Parser")).toBe("Parser")
    // A dropped image still separates the words around it.
    expect(readmeSearchText("fast![logo](logo.png)parser")).toBe("fast parser")
  })

  it("links keep their words and drop their target", () => {
    expect(readmeSearchText("Read [the docs](https://example.com/docs) first")).toBe("Read the docs first")
    expect(readmeSearchText("[a](x) and [b](y)")).toBe("a and b")
    expect(readmeSearchText("[](empty)x")).toBe("x")
  })

  it("bare http and https URLs are dropped", () => {
    expect(readmeSearchText("see https://example.com/x?y=1 and http://a.example/b now")).toBe("see and now")
    expect(readmeSearchText("ftp://files.example stays")).toBe("ftp://files.example stays")
  })

  it("the text is cut to its first 8000 characters", () => {
    expect(README_TEXT_LIMIT).toBe(8_000)
    expect(readmeSearchText("a".repeat(8_000))).toHaveLength(8_000)
    const long = readmeSearchText(`${"word ".repeat(2_000)}tail`)
    expect(long).toHaveLength(8_000)
    expect(long.startsWith("word word")).toBe(true)
    expect(long).not.toContain("tail")
    // Markup is dropped before cutting, so the limit counts words, not markup.
    expect(readmeSearchText(`${"<b></b>".repeat(2_000)}kept`)).toBe("kept")
  })

  it("the text never holds markup characters, runs of whitespace or surrounding space", () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (markdown) => {
      const text = readmeSearchText(markdown)
      expect(text).not.toMatch(/[`*_#>|~=]|\s\s|^\s|\s$/)
      expect(text.length).toBeLessThanOrEqual(README_TEXT_LIMIT)
    }))
  })
})

describe("search text of topics", () => {
  it("topics are searched as words separated by spaces", () => {
    expect(topicsSearchText(["cli", "json", "parser"])).toBe("cli json parser")
    expect(topicsSearchText(["machine-learning"])).toBe("machine-learning")
    expect(topicsSearchText([])).toBe("")
  })
})
