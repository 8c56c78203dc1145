// The stand-in for `smolagents-ts/models` (see ./index.js): `BaseModel`, and an `OpenAIModel`
// that reaches no API. A test that runs a program using `OpenAIModel` puts a scripted one in
// place of this file.
export class BaseModel {
  parse_tool_calls(message) {
    return message
  }
}

export class OpenAIModel extends BaseModel {
  constructor(config) {
    super()
    this.config = config
  }
  async generate() {
    throw new Error('the stand-in OpenAIModel reaches no API: give the agent a scripted model')
  }
}
