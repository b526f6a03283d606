// Follow keeps a scrolling transcript at its newest text while it grows,
// unless the person has scrolled up: then it stays where they are and
// shows a "Jump to latest" button, which scrolls down and follows again.
// Scrolling back to the bottom follows again too.
//
// Only a scroll upwards unsticks the view: growing content never moves
// it up, and a scroll event is dispatched a frame after the scroll, when
// more text may already have arrived (so "not at the bottom" at that
// moment says nothing). A content that shrinks pulls the view up to its
// new end, which is the bottom again. Reaching the bottom sticks it.
export class Follow {
  // scroller is the element that scrolls; content grows inside it; jump
  // is the button shown while the view is away from the bottom.
  constructor(scroller, content, jump) {
    this.scroller = scroller;
    this.jump = jump;
    this.stuck = true;
    this.top = 0; // scrollTop at the last scroll seen or made
    scroller.addEventListener('scroll', () => {
      const top = scroller.scrollTop;
      if (this.atBottom()) this.stuck = true;
      else if (top < this.top - 1) this.stuck = false;
      this.top = top;
      if (this.stuck) this.toBottom();
      this.jump.hidden = this.stuck;
    }, { passive: true });
    jump.addEventListener('click', () => this.toBottom(true));
    const grew = () => {
      if (this.stuck) this.toBottom();
      else this.jump.hidden = false;
    };
    this.observer = new ResizeObserver(grew);
    this.observer.observe(content);
    this.observer.observe(scroller);
  }

  // atBottom tells whether the view shows the end of the content.
  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 24;
  }

  // toBottom scrolls to the newest text and follows it from now on;
  // focus moves to the composer's box when asked (after the button, so
  // keyboard users land where they type).
  toBottom(fromButton = false) {
    this.stuck = true;
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.top = this.scroller.scrollTop;
    this.jump.hidden = true;
    if (fromButton) this.onJump?.();
  }
}
