// A real Redis for the tests that need one: Debian's `redis-server` (.ci/run installs it), started
// on a free loopback port with a data folder of its own and no persistence, and stopped (SIGTERM,
// then SIGKILL) by `stop()`. Every wait is bounded and fails with what it waited for.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface RedisServer {
  host: string
  port: number
  /** ioredis options for this server. */
  connection: { host: string; port: number; maxRetriesPerRequest: null }
  stop(): Promise<void>
}

const READY_MS = 10_000
const STOP_MS = 5_000

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

/** Starts a Redis server; a port taken between the probe and the start is tried again. */
export async function startRedis(): Promise<RedisServer> {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (found.error !== undefined || found.status !== 0) {
    throw new Error('redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run installs it)')
  }
  let lastError: unknown
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await startOnce(await freePort())
    } catch (error) {
      lastError = error
    }
  }
  throw lastError
}

async function startOnce(port: number): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ses-redis-'))
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  child.stdout!.setEncoding('utf8')
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => (output += chunk))
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server on port ${port} not ready after ${READY_MS} ms:\n${output}`)), READY_MS)
      child.stdout!.on('data', (chunk: string) => {
        output += chunk
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`redis-server on port ${port} exited (${code ?? signal}) before it was ready:\n${output}`))
      })
    })
  } catch (error) {
    child.kill('SIGKILL')
    await waitForExit(child, STOP_MS)
    cleanup()
    throw error
  }
  child.stdout!.resume()
  // A test process that ends without stop() (a crash, process.exit) takes its server with it.
  const orphaned = () => child.kill('SIGKILL')
  process.once('exit', orphaned)
  const host = '127.0.0.1'
  return {
    host,
    port,
    connection: { host, port, maxRetriesPerRequest: null },
    async stop() {
      process.off('exit', orphaned)
      child.kill('SIGTERM')
      if (!(await waitForExit(child, STOP_MS))) {
        child.kill('SIGKILL')
        if (!(await waitForExit(child, STOP_MS))) throw new Error(`redis-server (pid ${child.pid}) did not stop`)
      }
      cleanup()
    },
  }
}
