'use strict'
// Canvas images as the image content parts chat APIs take, so that a model sees what the code
// drew as an image rather than as base64 text: the OpenAI Chat Completions shape
// (`{ type: 'image_url', image_url: { url } }`), which most chat APIs accept or map one to one,
// and smolagents-ts's own (`{ type: 'image', image }`, its ImageContentPart, which its models
// are to send as images). Chat APIs take images in user messages only (a tool message holds
// text), so each helper's images travel in a user message of their own.

/** The content-part shapes, by the name the options use. */
const FORMATS = ['chat-completions', 'smolagents']

/** `data:image/png;base64,…` of a `CanvasImage` (`{ mimeType, data }`). */
function dataUrl(image) {
  return `data:${image.mimeType};base64,${Buffer.from(image.data).toString('base64')}`
}

/** The content part of an image at `url` (a data URL), in `format`. */
function imagePart(url, format) {
  return format === 'smolagents' ? { type: 'image', image: url } : { type: 'image_url', image_url: { url } }
}

/** `format` checked: one of FORMATS, `chat-completions` when left out. */
function contentFormat(format, where) {
  if (format === undefined) return 'chat-completions'
  if (!FORMATS.includes(format)) {
    throw new TypeError(`${where}: format must be ${FORMATS.map((name) => JSON.stringify(name)).join(' or ')}`)
  }
  return format
}

/** A user message that shows `urls` to the model after a line of `text`. */
function imagesMessage(text, urls, format) {
  return { role: 'user', content: [{ type: 'text', text }, ...urls.map((url) => imagePart(url, format))] }
}

module.exports = { FORMATS, contentFormat, dataUrl, imagesMessage }
