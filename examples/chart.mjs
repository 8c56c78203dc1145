// Agent code draws a labelled bar chart from data on the sandbox's canvas; the executor returns
// the canvas as a PNG with the run's result, and this script writes it to a file.
//
//   node examples/chart.mjs [out.png]      (default: docs/chart.png)
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

import { SESExecutor } from '@smolagents-ts/ses-executor'

/** What a model might write when asked to chart the data it was given. */
export const CHART_CODE = `
const W = 640, H = 400, pad = { left: 70, right: 24, top: 56, bottom: 64 }
const canvas = getCanvas(W, H)
const ctx = canvas.getContext('2d')

ctx.fillStyle = '#ffffff'
ctx.fillRect(0, 0, W, H)

ctx.fillStyle = '#1f2937'
ctx.font = 'bold 20px sans-serif'
ctx.textAlign = 'center'
ctx.fillText(title, W / 2, 34)

const plotW = W - pad.left - pad.right, plotH = H - pad.top - pad.bottom
const max = Math.ceil(Math.max(...sales.map((d) => d.value)) / 50) * 50

// Grid lines and y-axis labels.
ctx.font = '12px sans-serif'
ctx.textAlign = 'right'
ctx.textBaseline = 'middle'
ctx.strokeStyle = '#e5e7eb'
ctx.lineWidth = 1
for (let v = 0; v <= max; v += 50) {
  const y = pad.top + plotH - (v / max) * plotH
  ctx.beginPath()
  ctx.moveTo(pad.left, Math.round(y) + 0.5)
  ctx.lineTo(W - pad.right, Math.round(y) + 0.5)
  ctx.stroke()
  ctx.fillStyle = '#6b7280'
  ctx.fillText(String(v), pad.left - 8, y)
}

// Bars, with their values on top and their labels below.
const slot = plotW / sales.length, barW = slot * 0.6
sales.forEach((d, i) => {
  const x = pad.left + i * slot + (slot - barW) / 2
  const h = (d.value / max) * plotH, y = pad.top + plotH - h
  const gradient = ctx.createLinearGradient(0, y, 0, y + h)
  gradient.addColorStop(0, '#60a5fa')
  gradient.addColorStop(1, '#2563eb')
  ctx.fillStyle = gradient
  ctx.beginPath()
  ctx.roundRect(x, y, barW, h, [6, 6, 0, 0])
  ctx.fill()

  ctx.fillStyle = '#111827'
  ctx.textAlign = 'center'
  ctx.textBaseline = 'bottom'
  ctx.font = 'bold 13px sans-serif'
  ctx.fillText(String(d.value), x + barW / 2, y - 4)
  ctx.textBaseline = 'top'
  ctx.font = '13px sans-serif'
  ctx.fillText(d.label, x + barW / 2, pad.top + plotH + 8)
})

// Axes and the rotated y-axis title.
ctx.strokeStyle = '#374151'
ctx.lineWidth = 2
ctx.beginPath()
ctx.moveTo(pad.left, pad.top)
ctx.lineTo(pad.left, pad.top + plotH)
ctx.lineTo(W - pad.right, pad.top + plotH)
ctx.stroke()
ctx.save()
ctx.translate(20, pad.top + plotH / 2)
ctx.rotate(-Math.PI / 2)
ctx.textAlign = 'center'
ctx.textBaseline = 'middle'
ctx.font = '13px sans-serif'
ctx.fillStyle = '#374151'
ctx.fillText('Units sold', 0, 0)
ctx.restore()

final_answer(\`Charted \${sales.length} months; best: \${sales.reduce((a, b) => (b.value > a.value ? b : a)).label}\`)
`

export const SALES = [
  { label: 'Jan', value: 120 },
  { label: 'Feb', value: 95 },
  { label: 'Mar', value: 180 },
  { label: 'Apr', value: 150 },
  { label: 'May', value: 210 },
  { label: 'Jun', value: 170 },
]

/** Runs the chart code in a fresh executor and returns its result (output and images). */
export async function renderChart({ sales = SALES, title = 'Monthly sales, first half' } = {}) {
  const executor = await SESExecutor.create()
  try {
    await executor.sendVariables({ sales, title })
    return await executor.run(CHART_CODE)
  } finally {
    await executor.cleanup()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? fileURLToPath(new URL('../docs/chart.png', import.meta.url))
  const result = await renderChart()
  const [image] = result.images
  await writeFile(out, image.data)
  console.log(`${result.output} -> ${out} (${image.width}×${image.height}, ${image.data.length} bytes)`)
}
