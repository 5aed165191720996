import { Effect, Layer, Option } from "effect"
import type { Account } from "../../domain/Account.js"
import type { AccountId } from "../../domain/Ids.js"
import { AccountStore } from "../../ports/AccountStore.js"

/** The AccountStore in memory, for tests and embedding. */
export const AccountStoreMemory = Layer.sync(AccountStore, () => {
  const accounts = new Map<AccountId, Account>()
  const byEmail = (email: string) => [...accounts.values()].find((a) => a.email === email)
  return {
    findById: (id) => Effect.sync(() => Option.fromNullable(accounts.get(id))),
    // The memory Transactor runs rules one at a time, so a plain read is already as good as a lock.
    findByIdForUpdate: (id) => Effect.sync(() => Option.fromNullable(accounts.get(id))),
    findByEmail: (email) => Effect.sync(() => Option.fromNullable(byEmail(email))),
    findByHostLogin: (login) =>
      Effect.sync(() => [...accounts.values()].filter((a) => a.hostLogin?.toLowerCase() === login.toLowerCase())),
    insertOrGet: (account) =>
      Effect.sync(() => {
        const existing = byEmail(account.email)
        if (existing) return existing
        accounts.set(account.id, account)
        return account
      }),
    update: (account) => Effect.sync(() => void accounts.set(account.id, account))
  }
})
