import type { SmolagentsTool } from '../index.js'

/** A workspace file tool: a smolagents tool object with a `name`. */
export interface WorkspaceTool extends SmolagentsTool {
  name: string
  description: string
  forward(args: Record<string, unknown>): Promise<string>
}

/**
 * The file tools of `root` (which must exist): `read_file`, `write_file`, `edit_file`,
 * `list_dir` and `grep`. Paths the model passes are relative to `root`; none of them can reach
 * outside it, through `..`, an absolute path or a symbolic link. Reads are limited to 1 MiB per
 * file; `grep` matches literal text unless `regex` is true.
 */
export declare function createWorkspaceTools(root: string): Promise<{
  read_file: WorkspaceTool
  write_file: WorkspaceTool
  edit_file: WorkspaceTool
  list_dir: WorkspaceTool
  grep: WorkspaceTool
}>
