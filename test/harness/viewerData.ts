/** Reads back what the viewer's data files hold (output/viewer/viewerPage.ts writes them as scripts). */

/** The articles of one `chunk-NNNNN.js`, in record order. */
export function chunkArticles(body: string): string[] {
  const call = /^mmifViewer\.chunk\(\d+,(.*)\);\n$/s.exec(body);
  if (!call) throw new Error(`not a viewer chunk: ${body.slice(0, 60)}`);
  return JSON.parse(call[1]!) as string[];
}

/** The index of `index.js`: every record's kind, source and verdict tokens, interned. */
export interface ViewerIndex {
  kinds: string[];
  sources: string[];
  tokens: string[];
  records: Array<[number, number, number[]]>;
}

export function viewerIndex(body: string): ViewerIndex {
  const call = /^mmifViewer\.index\((.*)\);\n$/s.exec(body);
  if (!call) throw new Error(`not a viewer index: ${body.slice(0, 60)}`);
  return JSON.parse(call[1]!) as ViewerIndex;
}
