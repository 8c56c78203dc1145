// A minimal PNG reader for the canvas tests: 8-bit RGBA, non-interlaced (what the executor
// writes), decoded with node:zlib and the five PNG filters, so that tests read the pixels the
// host receives rather than trusting the encoder.
import { inflateSync } from 'node:zlib'

export interface DecodedPng {
  width: number
  height: number
  /** Straight RGBA, row after row. */
  rgba: Uint8Array
  /** The colour at (x, y) as `[r, g, b, a]`. */
  at(x: number, y: number): [number, number, number, number]
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

export function decodePng(file: Uint8Array): DecodedPng {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength)
  if (!SIGNATURE.every((b, i) => bytes[i] === b)) throw new Error('not a PNG')
  let width = 0
  let height = 0
  const idat: Buffer[] = []
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    const data = bytes.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      if (data[8] !== 8 || data[9] !== 6 || data[12] !== 0) throw new Error('expected 8-bit RGBA, not interlaced')
    } else if (type === 'IDAT') {
      idat.push(data)
    }
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * 4
  const rgba = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const left = i >= 4 ? rgba[y * stride + i - 4] : 0
      const up = y > 0 ? rgba[(y - 1) * stride + i] : 0
      const upLeft = y > 0 && i >= 4 ? rgba[(y - 1) * stride + i - 4] : 0
      let predicted = 0
      if (filter === 1) predicted = left
      else if (filter === 2) predicted = up
      else if (filter === 3) predicted = (left + up) >> 1
      else if (filter === 4) {
        const p = left + up - upLeft
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)]
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
      }
      rgba[y * stride + i] = (line[i] + predicted) & 0xff
    }
  }
  return {
    width,
    height,
    rgba,
    at(x, y) {
      const i = (y * width + x) * 4
      return [rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]]
    },
  }
}

/** The bounding box `[left, top, right, bottom]` (inclusive) of pixels matching `ink`. */
export function inkBox(png: DecodedPng, ink: (rgba: [number, number, number, number]) => boolean) {
  let box: [number, number, number, number] | undefined
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      if (!ink(png.at(x, y))) continue
      box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y]
    }
  }
  return box
}
