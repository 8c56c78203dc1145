'use strict'
// Loads the native addon through the loader napi-rs generates (binding.js), which tries this
// platform's `.node` file beside the package and then its platform package
// (`@smolagents-ts/ses-executor-<triple>`). When none of them loads, the generated loader throws a
// generic "Cannot find native binding" (with npm advice that rarely applies); this replaces it with
// what a user can act on: the platform triple, what was tried, which platforms have prebuilt
// binaries, and the one command that builds from source.
const path = require('node:path')
const { existsSync } = require('node:fs')

const packageRoot = path.join(__dirname, '..')
const manifest = require('../package.json')

/** The generated loader's own messages for "nothing loaded" (binding.js, napi-rs 3). */
const NOT_FOUND = [/^Cannot find native binding\b/, /^Failed to load native binding\b/]

function loadBinding() {
  try {
    return require('../binding.js')
  } catch (error) {
    if (!(error instanceof Error) || !NOT_FOUND.some((pattern) => pattern.test(error.message))) throw error
    throw noBindingError(error)
  }
}

/** Every error of the loader's `cause` chain (one per candidate it tried). */
function causes(error) {
  const chain = []
  for (let cause = error.cause; cause instanceof Error && chain.length < 64; cause = cause.cause) chain.push(cause)
  return chain.reverse()
}

/** The error a user sees when no addon fits this platform (see the README's Install section). */
function noBindingError(loaderError) {
  const tried = []
  const failures = []
  for (const cause of causes(loaderError)) {
    const missing = /^Cannot find module '([^']+)'/.exec(cause.message)
    if (missing) tried.push(missing[1])
    else failures.push(cause.message.split('\n')[0])
  }
  const prefix = `${manifest.name}-`
  const nativePackages = tried.filter((name) => name.startsWith(prefix) && !name.endsWith('-wasm32-wasi'))
  const triple = nativePackages.length > 0 ? nativePackages[0].slice(prefix.length) : `${process.platform}-${process.arch}`
  const published = Object.keys(manifest.optionalDependencies ?? {})
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length))

  const lines = [`${manifest.name}: no native addon loads on this platform, ${triple} (Node ${process.version}).`]
  if (tried.length > 0) lines.push(`Tried: ${tried.join(', ')}.`)
  // A binary that exists but fails to load (an older glibc, a wrong architecture) says why here.
  for (const failure of failures) lines.push(`Failed: ${failure}`)
  if (published.includes(triple)) {
    // npm skips an optional dependency it cannot install without failing the install, so
    // either cause leaves the same trace here: say both.
    const platformPackage = `${prefix}${triple}@${manifest.optionalDependencies[`${prefix}${triple}`]}`
    lines.push(
      `A prebuilt binary for ${triple} is the optional dependency ${platformPackage}, and it is not installed. ` +
        'Either it was left out: install again without --omit=optional (or --no-optional), and without a lock ' +
        'file made on another platform. Or npm could not fetch it (npm skips an optional dependency it cannot ' +
        `install): check that your registry has it (npm view ${platformPackage} version), then install again.`,
    )
  } else if (published.length > 0) {
    lines.push(`Prebuilt binaries are published for: ${published.join(', ')}.`)
  }
  lines.push(buildFromSource())
  const error = new Error(lines.join('\n'), { cause: loaderError })
  error.code = 'ERR_SES_EXECUTOR_NO_BINARY'
  return error
}

/** The one command that builds the addon from source where this copy of the package is. */
function buildFromSource() {
  const needs = 'Rust 1.95+ and a C compiler'
  if (existsSync(path.join(packageRoot, 'Cargo.toml'))) {
    return `To build it from source (${needs}), run in ${packageRoot}: npm run build`
  }
  const repository = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url
  if (repository) {
    // `git+https://…` as npm writes it; shorthands such as `github:owner/repo` install as they are.
    const url = /^[a-z]+:\/\//.test(repository) ? `git+${repository}` : repository
    return `To build it from source (${needs}): npm install ${url} (its prepare script builds the addon)`
  }
  return (
    `To build it from source (${needs}): npm install <git URL or clone of ${manifest.name}> ` +
    '(its prepare script builds the addon)'
  )
}

module.exports = { loadBinding, noBindingError }
