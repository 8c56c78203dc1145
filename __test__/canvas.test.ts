// Canvas 2D in the sandbox, PNG out (`CodeOutput.images`), under the
// executor's memory and time limits. Pixels are read back from the PNG the host receives.
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { afterEach, describe, expect, it } from 'vitest'

import { CHART_CODE, SALES, renderChart } from '../examples/chart.mjs'
import { SESExecutor, rejectionOf } from './helpers'
import { decodePng, inkBox } from './png'

const live: InstanceType<typeof SESExecutor>[] = []
async function executor(options: ConstructorParameters<typeof SESExecutor>[0] = {}) {
  const created = await SESExecutor.create({ timeoutMs: 5000, ...options })
  live.push(created)
  return created
}
afterEach(async () => {
  await Promise.all(live.splice(0).map((e) => e.cleanup().catch(() => {})))
})

const opaque = ([, , , a]: number[]) => a > 0

describe('canvas images', () => {
  it('returns every canvas drawn during a run as a PNG with its size, in creation order', async () => {
    const ex = await executor()
    const result = await ex.run(`
      const a = getCanvas(30, 20), b = new OffscreenCanvas(12, 8)
      b.getContext('2d').fillRect(0, 0, 1, 1)
      const g = a.getContext('2d')
      g.fillStyle = 'rgb(255, 128, 0)'
      g.fillRect(10, 5, 10, 10)
      'drawn'
    `)
    expect(result.output).toBe('drawn')
    expect(result.images.map(({ mimeType, width, height }) => ({ mimeType, width, height }))).toEqual([
      { mimeType: 'image/png', width: 30, height: 20 },
      { mimeType: 'image/png', width: 12, height: 8 },
    ])
    expect(result.images[0].data).toBeInstanceOf(Uint8Array)
    const png = decodePng(result.images[0].data)
    expect(png.at(15, 10)).toEqual([255, 128, 0, 255])
    expect(png.at(5, 5)).toEqual([0, 0, 0, 0])
    expect(inkBox(png, opaque)).toEqual([10, 5, 19, 14])
  })

  it('returns no images from runs that do not draw, and none from failed runs', async () => {
    const ex = await executor()
    expect((await ex.run('1 + 1')).images).toEqual([])
    expect((await ex.run('globalThis.c = getCanvas(5, 5); c.getContext("2d").font = "bold 9px serif"')).images).toEqual([])
    const failed = await rejectionOf(ex.run('c.getContext("2d").fillRect(0, 0, 5, 5); null.x'))
    expect(failed.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect((await ex.run('c.width')).images).toEqual([])
  })

  it('keeps a canvas across runs like any global and returns it again when drawn on', async () => {
    const ex = await executor()
    await ex.run(`var chart = getCanvas(20, 20), g = chart.getContext('2d'); g.fillStyle = 'blue'; g.fillRect(0, 0, 10, 10)`)
    const second = await ex.run(`g.fillStyle = 'red'; g.fillRect(10, 10, 10, 10)`)
    expect(second.images).toHaveLength(1)
    const png = decodePng(second.images[0].data)
    expect(png.at(2, 2)).toEqual([0, 0, 255, 255])
    expect(png.at(15, 15)).toEqual([255, 0, 0, 255])
  })

  it('renders paths, arcs, clips, gradients and transforms where they belong', async () => {
    const ex = await executor()
    const { images } = await ex.run(`
      const g = getCanvas(100, 100).getContext('2d')
      g.beginPath(); g.arc(25, 25, 20, 0, Math.PI * 2); g.fillStyle = '#00ff00'; g.fill()
      g.beginPath(); g.rect(50, 0, 50, 50); g.rect(60, 10, 30, 30); g.fillStyle = 'black'; g.fill('evenodd')
      g.save(); g.beginPath(); g.rect(0, 50, 25, 50); g.clip()
      const grad = g.createLinearGradient(0, 0, 50, 0); grad.addColorStop(0, 'white'); grad.addColorStop(1, 'white')
      g.fillStyle = grad; g.fillRect(0, 50, 50, 50); g.restore()
      g.translate(75, 75); g.rotate(Math.PI / 4); g.fillStyle = 'rgba(255, 0, 0, 1)'; g.fillRect(-5, -5, 10, 10)
    `)
    const png = decodePng(images[0].data)
    expect(png.at(25, 25)).toEqual([0, 255, 0, 255])
    expect(png.at(2, 2)[3]).toBe(0)
    expect(png.at(55, 5)).toEqual([0, 0, 0, 255])
    expect(png.at(75, 25)[3]).toBe(0)
    expect(png.at(10, 75)).toEqual([255, 255, 255, 255])
    expect(png.at(40, 75)[3]).toBe(0)
    expect(png.at(75, 75)).toEqual([255, 0, 0, 255])
    expect(png.at(75, 68)[0]).toBe(255)
    expect(png.at(68, 68)[3]).toBe(0)
  })

  it('draws text inside the box measureText reports, with the bundled font', async () => {
    const ex = await executor()
    const { output, images } = await ex.run(`
      const g = getCanvas(240, 60).getContext('2d')
      g.font = 'bold 28px Helvetica, sans-serif'
      g.fillStyle = 'black'
      g.textBaseline = 'alphabetic'
      g.fillText('Revenue', 20, 40)
      const m = g.measureText('Revenue')
      ;({ left: 20 - m.actualBoundingBoxLeft, right: 20 + m.actualBoundingBoxRight,
          top: 40 - m.actualBoundingBoxAscent, bottom: 40 + m.actualBoundingBoxDescent, width: m.width })
    `)
    const box = output as { left: number; right: number; top: number; bottom: number; width: number }
    const [l, t, r, b] = inkBox(decodePng(images[0].data), opaque)!
    expect(Math.abs(l - box.left)).toBeLessThanOrEqual(1.5)
    expect(Math.abs(r - box.right)).toBeLessThanOrEqual(1.5)
    expect(Math.abs(t - box.top)).toBeLessThanOrEqual(1.5)
    expect(Math.abs(b - box.bottom)).toBeLessThanOrEqual(1.5)
    expect(box.width).toBeGreaterThan(100)
  })

  it('reads and writes pixels, draws canvases onto canvases, and gives data URLs', async () => {
    const ex = await executor()
    const { output, images } = await ex.run(`
      const src = new OffscreenCanvas(2, 1), s = src.getContext('2d')
      const px = s.createImageData(2, 1)
      px.data.set([255, 0, 0, 255, 0, 0, 255, 255])
      s.putImageData(px, 0, 0)
      const dst = getCanvas(20, 10), d = dst.getContext('2d')
      d.imageSmoothingEnabled = false
      d.drawImage(src, 0, 0, 20, 10)
      const back = d.getImageData(0, 0, 20, 10).data
      ;[back[0], back[2], back[19 * 4 + 2], dst.toDataURL().slice(0, 22)]
    `)
    expect(output).toEqual([255, 0, 255, 'data:image/png;base64,'])
    expect(images).toHaveLength(2)
    const png = decodePng(images[1].data)
    expect(png.at(2, 5)).toEqual([255, 0, 0, 255])
    expect(png.at(17, 5)).toEqual([0, 0, 255, 255])
  })

  it('throws a TypeError naming each unsupported member', async () => {
    const ex = await executor()
    const { output } = await ex.run(`
      const g = getCanvas(4, 4).getContext('2d')
      const tries = ['g.createPattern(g.canvas, "repeat")', 'g.shadowBlur = 3', 'g.filter = "blur(2px)"',
        'g.isPointInPath(1, 1)', 'g.canvas.getContext("webgl")', 'new Path2D()', 'g.canvas.convertToBlob()']
      tries.map((code) => { try { return run(code) } catch (e) { return e.name + ': ' + e.message } })
      function run(code) {
        switch (code) {
          case tries[0]: g.createPattern(g.canvas, 'repeat'); break
          case tries[1]: g.shadowBlur = 3; break
          case tries[2]: g.filter = 'blur(2px)'; break
          case tries[3]: g.isPointInPath(1, 1); break
          case tries[4]: g.canvas.getContext('webgl'); break
          case tries[5]: new Path2D(); break
          case tries[6]: g.canvas.convertToBlob(); break
        }
        return 'no error'
      }
    `)
    const messages = output as string[]
    for (const [message, member] of messages.map((m, i) => [m, ['createPattern', 'shadowBlur', 'filter', 'isPointInPath', "getContext('webgl')", 'Path2D', 'convertToBlob'][i]])) {
      expect(message).toMatch(/^TypeError: /)
      expect(message).toContain(member)
    }
    // Values that turn an unsupported feature off are accepted.
    await expect(ex.run(`const h = getCanvas(1, 1).getContext('2d'); h.shadowBlur = 0; h.shadowColor = 'transparent'; h.filter = 'none'`)).resolves.toBeDefined()
  })
})

describe('canvas limits', () => {
  it('caps canvas sizes with maxCanvasSize: a catchable RangeError, details.limit when uncaught', async () => {
    const ex = await executor({ maxCanvasSize: 256 })
    const caught = await ex.run(`(() => { try { getCanvas(257, 10) } catch (e) { return [e instanceof RangeError, e.limit] } })()`)
    expect(caught.output).toEqual([true, 'maxCanvasSize'])
    const error = await rejectionOf(ex.run('const c = new OffscreenCanvas(10, 300)'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details).toMatchObject({ limit: 'maxCanvasSize', line: 1 })
    expect(error.message).toContain('maxCanvasSize')
    expect(ex.state).toBe('READY')
  })

  it('refuses invalid maxCanvasSize values', () => {
    for (const bad of [0, -1, 1.5, 40000]) {
      expect(() => new SESExecutor({ maxCanvasSize: bad })).toThrow(/maxCanvasSize/)
    }
  })

  it('counts pixels against memoryLimitBytes and gives them back when the canvas is dropped', async () => {
    const ex = await executor({ memoryLimitBytes: 16 * 1024 * 1024 })
    const error = await rejectionOf(ex.run('getCanvas(4096, 1024)'))
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details.limit).toBe('memoryLimitBytes')
    expect(ex.state).toBe('READY')
    // 12 MiB of pixels leave the heap about 4 MiB: a 6 MiB string no longer fits, and the run
    // fails at the heap limit even though the code catches QuickJS's error (docs/limits-and-errors.md "Limits and what they guarantee").
    const squeezed = await rejectionOf(
      ex.run(`var big = getCanvas(2048, 1536); (() => { try { return 'x'.repeat(6 << 20).length } catch { return 'refused' } })()`),
    )
    expect({ code: squeezed.code, limit: squeezed.details.limit, state: ex.state }).toEqual({
      code: 'ERR_RUNTIME_EXCEPTION',
      limit: 'memoryLimitBytes',
      state: 'DIRTY',
    })
    const fresh = await executor({ memoryLimitBytes: 16 * 1024 * 1024 })
    expect((await fresh.run('var big = getCanvas(2048, 1536); big.width')).output).toBe(2048)
    expect((await fresh.run(`big = null; 'x'.repeat(6 << 20).length`)).output).toBe(6 << 20)
  })

  it('a canvas’s saved states count against the memory limit', async () => {
    // Every save() copies the dash list and the font: 200 saves of a 1,000,000-entry dash list
    // took 800 MiB of the process under a 64 MiB limit.
    const limit = 16 * 1024 * 1024
    const ex = await executor({ memoryLimitBytes: limit, maxOperations: 1e9 })
    const result = await ex.run(`
      const g = getCanvas(10, 10).getContext('2d')
      const refused = (f) => { try { f(); return null } catch (e) { return [e.name, e.limit ?? null] } }
      const long = refused(() => g.setLineDash(new Array(1e6)))
      g.setLineDash(new Array(1024).fill(1))
      g.font = '10px ' + 'a'.repeat(1000)
      let saves = 0
      const full = refused(() => { for (;;) { g.save(); saves++ } })
      ;({ long, full, saves })
    `)
    expect(result.output.long).toEqual(['RangeError', null])
    expect(result.output.full).toEqual(['RangeError', 'memoryLimitBytes'])
    expect(result.output.saves).toBeGreaterThan(1000)
    expect(result.output.saves).toBeLessThan(4096)
    expect(result.stats.peakHeapBytes).toBeLessThanOrEqual(limit)
    expect(ex.state).toBe('READY')
  })

  it('a fill with many gradient stops stops at the deadline and frees its thread', () => {
    // Each pixel looks at every stop: 50,000 stops over a megapixel kept a pool thread busy for
    // 16–42 s after cleanup(). Stops are capped (1024) and fills are painted in bands of rows
    // with the deadline checked between them.
    const code = `
      const g = getCanvas(4096, 4096).getContext('2d')
      const gradient = g.createLinearGradient(0, 0, 4096, 0)
      let stops = 0
      try { for (;;) { gradient.addColorStop(stops / 50000, stops % 2 ? 'red' : 'blue'); stops++ } } catch {}
      g.fillStyle = gradient
      g.fillRect(0, 0, 4096, 4096)`
    const timeoutMs = 200
    const fixture = fileURLToPath(new URL('./fixtures/cpu-after-cleanup.cjs', import.meta.url))
    const child = spawnSync(process.execPath, [fixture, code, String(timeoutMs)], { encoding: 'utf8', timeout: 60_000 })
    expect(child.status, child.stderr).toBe(0)
    const measured = JSON.parse(child.stdout.trim().split('\n').pop()!)
    expect(measured).toMatchObject({ code: 'ERR_EXEC_TIMEOUT', state: 'DIRTY' })
    expect(measured.details.stillRunning).toBeUndefined()
    expect(measured.settledMs).toBeLessThan(timeoutMs + 500 + 500)
    expect(measured.pool).toMatchObject({ busy: 0, queued: 0, engines: 0 })
    expect(measured.quietCpuMs).toBeLessThan(100)
  })

  it('encodes the images after the run, outside its deadline: a program that ends in time is answered with them', async () => {
    // Three large canvases take about a second to encode: encoding before the answer turned a
    // program that ends at once into ERR_EXEC_TIMEOUT with stillRunning.
    const ex = await executor({ timeoutMs: 100, memoryLimitBytes: 1024 * 1024 * 1024 })
    const started = performance.now()
    const result = await ex.run(`for (let i = 0; i < 3; i++) getCanvas(8192, 4096).getContext('2d').fillRect(i, i, 1, 1); 'drawn'`)
    expect(result.output).toBe('drawn')
    expect(result.images.map(({ width, height }) => [width, height])).toEqual([
      [8192, 4096],
      [8192, 4096],
      [8192, 4096],
    ])
    expect(ex.state).toBe('READY')
    // The answer came after the deadline and its grace: the deadline was really at stake.
    expect(performance.now() - started).toBeGreaterThan(100)
    // A debug build's encoder takes tens of seconds for these.
  }, 120_000)

  it('counts the PNGs being encoded and held for the answer against memoryLimitBytes', async () => {
    // 4 MiB of noise: its PNG is as large as its pixels, and the canvas, the image data and the
    // file do not fit in 10 MiB together.
    const limit = 10 * 1024 * 1024
    const ex = await executor({ memoryLimitBytes: limit, maxOperations: 1e9, timeoutMs: 60_000 })
    const error = await rejectionOf(
      ex.run(`
        const g = getCanvas(1024, 1024).getContext('2d')
        const data = g.createImageData(1024, 1024), words = new Uint32Array(data.data.buffer)
        let x = 1; for (let i = 0; i < words.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; words[i] = x }
        g.putImageData(data, 0, 0)`),
    )
    expect(error.code).toBe('ERR_RUNTIME_EXCEPTION')
    expect(error.details.limit).toBe('memoryLimitBytes')
    expect(error.message).toContain('PNG')
    expect(ex.state).toBe('READY')
    // What canvases hold is in the run's peak, as the heap is.
    const peak = await (await executor({ memoryLimitBytes: limit })).run('getCanvas(1000, 1000); 1')
    expect(peak.stats.peakHeapBytes).toBeGreaterThanOrEqual(4_000_000)
  })

  it('stops a drawing loop at the deadline', async () => {
    const ex = await executor({ timeoutMs: 300 })
    const started = performance.now()
    const error = await rejectionOf(
      ex.run(`const g = getCanvas(2048, 2048).getContext('2d'); Array.from({ length: 1e6 }, () => g.fillRect(0, 0, 2048, 2048))`),
    )
    expect(error.code).toBe('ERR_EXEC_TIMEOUT')
    expect(performance.now() - started).toBeLessThan(3000)
    expect(ex.state).toBe('DIRTY')
  })
})

describe('examples/chart.mjs', () => {
  it('draws a labelled bar chart whose bars stand where the data puts them', async () => {
    const result = await renderChart()
    expect(result.is_final_answer).toBe(true)
    expect(result.output).toBe(`Charted ${SALES.length} months; best: May`)
    expect(result.images).toHaveLength(1)
    const png = decodePng(result.images[0].data)
    expect([png.width, png.height]).toEqual([640, 400])
    // The tallest bar (May, 210 of a 250 scale) is blue near its top; above it is white.
    const plotTop = 56
    const plotH = 400 - 56 - 64
    const slot = (640 - 70 - 24) / SALES.length
    const mayX = Math.round(70 + 4 * slot + slot / 2)
    const barTop = plotTop + plotH - (210 / 250) * plotH
    const [r, g, b] = png.at(mayX, Math.round(barTop + 10))
    expect(b).toBeGreaterThan(200)
    expect(r).toBeLessThan(120)
    expect(g).toBeLessThan(190)
    expect(png.at(mayX, Math.round(barTop - 30))).toEqual([255, 255, 255, 255])
    // Labels were drawn: dark text pixels below the axis.
    const labels = inkBox(png, ([r, g, b]) => r < 80 && g < 80 && b < 80)
    expect(labels).toBeDefined()
    expect(CHART_CODE).toContain('fillText(d.label')
  })

  it('the committed docs/chart.png is what the example draws', async () => {
    const committed = decodePng(await readFile(path.join(__dirname, '..', 'docs', 'chart.png')))
    const drawn = decodePng((await renderChart()).images[0].data)
    expect([committed.width, committed.height]).toEqual([drawn.width, drawn.height])
    expect(Buffer.from(committed.rgba).equals(Buffer.from(drawn.rgba))).toBe(true)
  })
})
