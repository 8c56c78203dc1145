// `npm run bench`'s first step (the `prebench` script): installs the benchmark's own optional
// peer, isolated-vm, into bench/node_modules. It is not a dependency of the package or of its
// development install: it has no prebuilt binary reachable from here and compiles with node-gyp,
// which needs Node's C++ headers. Here they come from the running Node's own install
// (`<prefix>/include/node`, as a system Node ships them), passed to node-gyp as `--nodedir`, so
// that nothing is downloaded and no npm configuration of the repository has to name them.
// A failure only leaves the peer out: the benchmark reports it as skipped.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const bench = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const peer = path.join(bench, 'node_modules', 'isolated-vm')
const wanted = JSON.parse(readFileSync(path.join(bench, 'package.json'), 'utf8')).optionalDependencies['isolated-vm']

if (installedVersion() !== wanted) {
  console.log(`bench: installing isolated-vm ${wanted} into bench/node_modules`)
  // Scripts off: its install script would first try to download a prebuilt binary.
  run(npm, ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], bench)
}
if (!loads()) {
  const nodeGyp = process.env.npm_config_node_gyp ?? path.join(path.dirname(process.env.npm_execpath ?? ''), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
  const prefix = path.resolve(path.dirname(process.execPath), '..')
  const headers = existsSync(path.join(prefix, 'include', 'node', 'node.h')) ? [`--nodedir=${prefix}`] : []
  console.log(`bench: building isolated-vm with node-gyp${headers.length ? ` against ${prefix}/include/node` : ''} (about a minute)`)
  // What its own install script runs after the download fails: rebuild, then drop the objects.
  const built = existsSync(nodeGyp) && run(process.execPath, [nodeGyp, 'rebuild', '--release', '-j', 'max', '--loglevel=warn', ...headers], peer)
  if (built) run(process.execPath, [nodeGyp, 'clean', '--loglevel=warn'], peer)
  if (!built || !loads()) console.log('bench: isolated-vm did not build; the benchmark runs without it')
}

function installedVersion() {
  try {
    return JSON.parse(readFileSync(path.join(peer, 'package.json'), 'utf8')).version
  } catch {
    return undefined
  }
}

function loads() {
  try {
    require('isolated-vm')
    return true
  } catch {
    return false
  }
}

function run(command, args, cwd) {
  // npm.cmd runs only through a shell on Windows; node itself must not (its path has a space).
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: command.endsWith('.cmd') })
  return result.status === 0
}
