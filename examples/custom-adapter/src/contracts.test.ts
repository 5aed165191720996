// repomarket's SingleUse contract, the same suite repomarket runs on its memory, PGlite and PostgreSQL stores.
import { runSingleUseContract } from "repomarket/testing/contracts"
import { SingleUseMap } from "./SingleUseMap.js"

runSingleUseContract({ name: "single-use map", rollsBack: false, concurrentClaims: true }, SingleUseMap)
