/** `input #<n>;`: the text of numbered input n, which the runner processes find in their model's requests. */
export function inputText(n: number): string {
  return `input #${n};`;
}

/** The numbers of the inputs in a text (see `inputText`). */
export function inputNumbers(text: string): number[] {
  return [...text.matchAll(/input #(\d+);/g)].map((match) => Number(match[1]));
}
