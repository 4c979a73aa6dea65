/** Fresh request ids for calling the scripts directly: a repeated id would be a resend. */
export function requestIds(): () => string {
  let last = 0;
  return () => {
    last += 1;
    return `t${last}`;
  };
}
