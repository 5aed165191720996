// The builders moved to the testing kit (`repomarket/testing`), which the contract suites ship with.
export * from "../../testing/Fixtures.js"
