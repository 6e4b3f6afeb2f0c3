// The failing round's draft tree as inline SVG: one box per candidate (token, cumulative score), laid out by
// depth (left to right) and subtree (top to bottom); the verified set filled, the accepted path drawn bold and
// marked, the target's prediction at each verified node underneath. Attributes (data-candidate, data-token,
// class) name what each element is, for people reading the source and for the browser test.
import { escapeHtml } from "./escape.ts";
import type { RoundTree, TreeNode } from "./failing-round.ts";

const COLUMN = 150;
const ROW = 54;
const BOX = { width: 118, height: 40 };

function layout(nodes: readonly TreeNode[]): Map<number, { x: number; y: number }> {
  const children = new Map<number, TreeNode[]>();
  for (const node of nodes) children.set(node.parent, [...(children.get(node.parent) ?? []), node]);
  const at = new Map<number, { x: number; y: number }>();
  let nextRow = 0;
  const place = (node: TreeNode): number => {
    const kids = children.get(node.id) ?? [];
    const rows = kids.map(place);
    const row = rows.length > 0 ? (rows[0] + rows[rows.length - 1]) / 2 : nextRow++;
    at.set(node.id, { x: 10 + node.depth * COLUMN, y: 10 + row * ROW });
    return row;
  };
  for (const root of nodes.filter((node) => !nodes.some((other) => other.id === node.parent))) place(root);
  return at;
}

function score(node: TreeNode): string {
  if (node.id === 0 && node.parent < 0) return "root";
  return node.score === undefined ? `#${node.id}` : `#${node.id} ${node.score.toPrecision(4)}`;
}

export function draftTreeSvg(tree: RoundTree): string {
  const at = layout(tree.nodes);
  const legendText = `request ${tree.request}, verify event ${tree.verifyEvent}: accept_len ${tree.acceptLen}, bonus ${tree.bonus}; filled: verified, bold: accepted path`;
  const width = Math.max(Math.max(...[...at.values()].map((p) => p.x)) + BOX.width + 20, 20 + legendText.length * 6.5);
  const height = Math.max(...[...at.values()].map((p) => p.y)) + BOX.height + 34;
  const parts: string[] = [];
  for (const node of tree.nodes) {
    const from = at.get(node.parent);
    const to = at.get(node.id)!;
    if (!from) continue;
    const cls = node.accepted ? "edge accepted" : node.verified ? "edge verified" : "edge";
    parts.push(
      `<line class="${cls}" x1="${from.x + BOX.width}" y1="${from.y + BOX.height / 2}" x2="${to.x}" y2="${to.y + BOX.height / 2}"/>`,
    );
  }
  for (const node of tree.nodes) {
    const { x, y } = at.get(node.id)!;
    const cls = ["node", node.verified ? "verified" : "candidate", node.accepted ? "accepted" : ""].join(" ").trim();
    const predict =
      node.predict !== undefined
        ? `<text class="predict" x="${x + 4}" y="${y + BOX.height + 11}">target: ${escapeHtml(node.predict)}</text>`
        : "";
    parts.push(
      `<g class="${cls}" data-candidate="${node.id}" data-token="${escapeHtml(node.token)}"${node.score !== undefined ? ` data-score="${node.score}"` : ""}>` +
        `<rect x="${x}" y="${y}" width="${BOX.width}" height="${BOX.height}" rx="6"/>` +
        `<text class="token" x="${x + 8}" y="${y + 17}">${escapeHtml(node.token)}</text>` +
        `<text class="score" x="${x + 8}" y="${y + 33}">${escapeHtml(score(node))}</text>${predict}</g>`,
    );
  }
  const legend = `<text class="legend" x="10" y="${height - 8}">${escapeHtml(legendText)}</text>`;
  return (
    `<svg class="draft-tree" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="draft tree of the failing round">` +
    parts.join("") +
    legend +
    "</svg>"
  );
}
