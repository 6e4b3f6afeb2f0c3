// Top-K tokens of a logits row with their log-softmax, ties to the lower token id (as topMargin).
export interface TopK {
  tokens: number[];
  logprobs: number[];
}

export function topKLogSoftmax(logits: ArrayLike<number>, offset: number, vocab: number, k: number): TopK {
  let max = -Infinity;
  for (let j = 0; j < vocab; j++) max = Math.max(max, logits[offset + j]);
  let sum = 0;
  for (let j = 0; j < vocab; j++) sum += Math.exp(logits[offset + j] - max);
  const logNormalizer = max + Math.log(sum);
  // k is small (<= 8): a partial selection keeps this O(vocab * k).
  const tokens: number[] = [];
  for (let pick = 0; pick < k; pick++) {
    let best = -1;
    for (let j = 0; j < vocab; j++) {
      if (tokens.includes(j)) continue;
      if (best < 0 || logits[offset + j] > logits[offset + best]) best = j;
    }
    tokens.push(best);
  }
  return { tokens, logprobs: tokens.map((token) => logits[offset + token] - logNormalizer) };
}
