// layout measures the loaded page: its size, main blocks, and the
// elements that overflow or are clipped; with selectors, the boxes of the
// elements they match. Called with one argument:
// {selectors: [..] or null, maxBoxes, maxBlocks}.
function layout(opts) {
  const vw = innerWidth, vh = innerHeight;
  const root = document.documentElement;
  const selectorOf = (el) => {
    const parts = [];
    while (el && el.nodeType === 1 && el !== root && !(el === document.body && parts.length)) {
      if (el.id) { parts.unshift('#' + CSS.escape(el.id)); break; }
      let s = el.localName + [...el.classList].slice(0, 2).map(c => '.' + CSS.escape(c)).join('');
      const p = el.parentElement;
      if (p) {
        const same = [...p.children].filter(c => c.localName === el.localName);
        if (same.length > 1) s += ':nth-of-type(' + (same.indexOf(el) + 1) + ')';
      }
      parts.unshift(s);
      el = p;
    }
    return parts.join(' > ') || 'html';
  };
  const boxOf = (el) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const hidden = (v) => v === 'hidden' || v === 'clip';
    const measurable = cs.display !== 'inline' && el.clientWidth > 0;
    const overX = measurable && el.scrollWidth > el.clientWidth + 1;
    const overY = measurable && el.scrollHeight > el.clientHeight + 1;
    const text = (el.textContent || '').trim() !== '';
    const clipX = overX && (hidden(cs.overflowX) || cs.textOverflow === 'ellipsis');
    const clipY = overY && hidden(cs.overflowY);
    const past = r.right + scrollX > vw + 1 && el !== root && el !== document.body;
    const notes = [];
    if ((clipX || clipY) && text) notes.push('text cut off (content ' + el.scrollWidth + '×' + el.scrollHeight + ' in a ' + el.clientWidth + '×' + el.clientHeight + ' box)');
    else if (overX || overY) notes.push((cs.overflowX === 'auto' || cs.overflowX === 'scroll' || cs.overflowY === 'auto' || cs.overflowY === 'scroll' ? 'scrolls' : 'content spills out') + ' (content ' + el.scrollWidth + '×' + el.scrollHeight + ' in a ' + el.clientWidth + '×' + el.clientHeight + ' box)');
    if (past) notes.push('reaches past the viewport\'s right edge (to x=' + Math.round(r.right + scrollX) + ')');
    return {
      selector: selectorOf(el),
      x: Math.round(r.left + scrollX), y: Math.round(r.top + scrollY),
      width: Math.round(r.width), height: Math.round(r.height),
      overflows: overX || overY || past,
      clipped: (clipX || clipY) && text,
      visible: r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none',
      note: notes.join('; '),
      pastOnly: past && !overX && !overY,
    };
  };
  const all = () => document.body ? document.body.querySelectorAll('*') : root.querySelectorAll('*');
  const out = {
    scrollWidth: root.scrollWidth, scrollHeight: root.scrollHeight,
    title: document.title || '', boxes: [], blocks: [], unmatched: [], brokenImages: 0, more: 0,
  };
  for (const img of document.images) if (img.complete && img.naturalWidth === 0) out.brokenImages++;
  if (opts.selectors) {
    for (const s of opts.selectors) {
      let found;
      try { found = document.querySelectorAll(s); } catch (e) { return {error: 'selector ' + JSON.stringify(s) + ' is not valid CSS'}; }
      if (found.length === 0) out.unmatched.push(s);
      for (const el of found) {
        if (out.boxes.length >= opts.maxBoxes) { out.more++; continue; }
        const b = boxOf(el); b.selector = b.selector; out.boxes.push(b);
      }
    }
    return out;
  }
  for (const el of all()) {
    if (el.closest('svg') && el.localName !== 'svg') continue; // a drawing's parts do not overflow like boxes
    const b = boxOf(el);
    if (!b.visible || !(b.overflows || b.clipped)) continue;
    // Past the viewport only because its parent is: the parent says it.
    if (b.pastOnly && el.parentElement && el.parentElement.getBoundingClientRect().right + scrollX > vw + 1 && el.parentElement !== document.body) continue;
    if (out.boxes.length >= opts.maxBoxes) { out.more++; continue; }
    out.boxes.push(b);
  }
  const depthOf = (el) => { let d = 0; while (el && el !== document.body) { d++; el = el.parentElement; } return d; };
  const area = vw * vh;
  for (const el of all()) {
    if (out.blocks.length >= opts.maxBlocks) break;
    const d = depthOf(el);
    if (d > 3 || ['script', 'style', 'template', 'noscript', 'br'].includes(el.localName)) continue;
    const b = boxOf(el);
    if (!b.visible || b.width * b.height < area * 0.02) continue;
    const text = (el.innerText || '').replace(/\s+/g, ' ').trim();
    out.blocks.push({selector: b.selector, x: b.x, y: b.y, width: b.width, height: b.height, depth: d,
      text: text.length > 80 ? text.slice(0, 79) + '…' : text});
  }
  return out;
}
