// The keyboard walk's side in the page (browsertest.KeyboardWalk): it
// lists the controls a person should reach with Tab, in the order they
// should reach them, notes how each looks before it has focus, then, step
// by step, says where focus went and whether the focused control shows
// it; and it catches every click, so a key that activates a control
// changes nothing while the walk tells that it did.
(() => {
  // Shown: rendered, not hidden, and not inside a closed details (whose
  // content the browser keeps laid out but skips, content-visibility).
  const visible = (el) => {
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none' || el.getClientRects().length === 0) return false;
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return false;
    const closed = el.closest('details:not([open])');
    return !closed || (el.tagName === 'SUMMARY' && el.parentElement === closed);
  };
  const describe = (el) => {
    let d = el.tagName.toLowerCase();
    if (el.id) d += '#' + el.id;
    else if (el.name) d += `[name=${el.name}]`;
    else if (el.classList.length) d += '.' + [...el.classList].join('.');
    const text = (el.textContent || el.value || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return text ? `${d} "${text}"` : d;
  };
  const interactive = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], [tabindex]';
  // What Tab should reach: every visible, enabled control that is not
  // taken out of the order (tabindex -1, inert); the first summary of a
  // details only; of a group of radio buttons, the checked one (or the
  // first). Positive tabindex would reorder the page: it is a problem.
  const reachable = (el) => {
    if (!visible(el) || el.disabled || el.closest('[inert]') || el.tabIndex < 0) return false;
    if (el.tagName === 'SUMMARY' && el.parentElement.tagName === 'DETAILS' && el.parentElement.querySelector('summary') !== el) return false;
    if (el.tagName === 'INPUT' && el.type === 'radio' && el.name) {
      const scope = el.form || document;
      const group = [...scope.querySelectorAll(`input[type=radio][name="${CSS.escape(el.name)}"]`)].filter((r) => visible(r) && !r.disabled);
      const checked = group.find((r) => r.checked);
      return el === (checked || group[0]);
    }
    return true;
  };
  const ring = (el) => {
    const s = getComputedStyle(el);
    return { outlineStyle: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth) || 0, outlineColor: s.outlineColor, boxShadow: s.boxShadow };
  };
  const parse = (c) => {
    const m = (c || '').match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a: a === undefined ? 1 : a };
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1,
  });
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const c of layers.reverse()) bg = over(c, bg);
    return bg;
  };
  const luminance = (c) => {
    const ch = [c.r, c.g, c.b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const contrast = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  // A focus indicator a person can see: an outline (auto, Chromium's own
  // ring, or at least 1 px in a colour of 3:1 against what is around the
  // control, WCAG 1.4.11) or a box shadow, that the control did not have
  // before it was focused.
  const indicator = (el, before) => {
    const now = ring(el);
    const changed = now.outlineStyle !== before.outlineStyle || now.outlineWidth !== before.outlineWidth ||
      now.outlineColor !== before.outlineColor || now.boxShadow !== before.boxShadow;
    if (!changed) return 'no visible focus indicator: its outline and box shadow are the same focused and not';
    if (now.outlineStyle === 'auto') return '';
    if (now.outlineStyle !== 'none' && now.outlineWidth >= 1) {
      const colour = parse(now.outlineColor);
      const around = background(el.parentElement || el);
      if (!colour || colour.a === 0) return `its focus outline is transparent (${now.outlineColor})`;
      const ratio = contrast(over(colour, around), around);
      if (ratio < 3) return `its focus outline has a contrast of ${ratio.toFixed(2)}:1 against what is around it (${now.outlineColor}), under 3:1`;
      return '';
    }
    if (now.boxShadow !== 'none') return '';
    return 'no visible focus indicator: it loses its outline when focused';
  };

  const w = {
    controls: [], before: [], clicks: [], problems: [], start: null,
    catchClick: (e) => { w.clicks.push(e.target); e.preventDefault(); e.stopImmediatePropagation(); },
    catchSubmit: (e) => { e.preventDefault(); e.stopImmediatePropagation(); },
  };
  w.begin = () => {
    w.controls = [...document.querySelectorAll(interactive)].filter(reachable);
    w.problems = w.controls.filter((el) => el.tabIndex > 0).map((el) => `${describe(el)} has tabindex ${el.tabIndex}, which takes it out of the page's order`);
    w.before = w.controls.map(ring);
    window.addEventListener('click', w.catchClick, true);
    window.addEventListener('submit', w.catchSubmit, true);
    // Tab starts where a page just loaded starts it: from outside the
    // page. The walk focuses a place holder after everything (without a
    // key, and removes it once Tab has left it): the first Tab leaves the
    // page, and the next comes in at the first control of the order.
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    w.start = document.createElement('span');
    w.start.tabIndex = -1;
    document.body.append(w.start);
    w.start.focus({ preventScroll: true });
    return w.controls.map(describe);
  };
  // Where focus is after a Tab: the index of the control in the list (-1
  // for another element, such as a scrolling region the browser made
  // focusable), what it is, and what is wrong with how it shows focus.
  w.step = () => {
    if (w.start) { w.start.remove(); w.start = null; }
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return { index: -2, what: 'the page', problem: '' };
    const i = w.controls.indexOf(el);
    w.clicks = [];
    const kind = el.tagName === 'A' ? 'link'
      : el.tagName === 'BUTTON' || el.getAttribute('role') === 'button' || (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)) ? 'button'
        : el.tagName === 'SUMMARY' ? 'summary'
          : el.tagName === 'INPUT' && ['checkbox', 'file'].includes(el.type) ? el.type : 'field';
    return { index: i, what: describe(el), kind, problem: indicator(el, i >= 0 ? w.before[i] : { outlineStyle: 'none', outlineWidth: 0, outlineColor: '', boxShadow: 'none' }) };
  };
  // Whether the keys pressed since the last step activated the focused
  // control: a click reached it (the walk's catch stopped what it does).
  w.activated = () => {
    const el = document.activeElement;
    const hit = w.clicks.some((t) => t === el || el.contains(t));
    w.clicks = [];
    return hit;
  };
  w.end = () => {
    if (w.start) { w.start.remove(); w.start = null; }
    window.removeEventListener('click', w.catchClick, true);
    window.removeEventListener('submit', w.catchSubmit, true);
    if (document.activeElement) document.activeElement.blur();
    window.scrollTo(0, 0);
    return w.problems;
  };
  window.__pcKeyboard = w;
  return true;
})()
