/* global document, window, navigator, HTMLFormElement, HTMLInputElement, HTMLTextAreaElement */
// The console works without this script. It adds two things: copy buttons beside secrets, and a confirmation
// dialog before destructive actions (without it, the server asks on a page of its own instead).
(() => {
  const region = document.querySelector('.notice-region');
  const announce = (text) => {
    if (!region) return;
    const p = document.createElement('p');
    p.className = 'notice';
    p.textContent = text;
    region.replaceChildren(p);
  };

  for (const button of document.querySelectorAll('button[data-copy]')) {
    const field = document.getElementById(button.dataset.copy);
    if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(field.value);
      } catch {
        // No clipboard API (an insecure origin, a browser that refuses): the old way.
        field.select();
        document.execCommand('copy');
      }
      const label = button.textContent;
      button.textContent = 'Copied';
      announce('Copied to the clipboard.');
      window.setTimeout(() => {
        button.textContent = label;
      }, 2000);
    });
  }

  // A read-only secret is selected whole when it gets focus, ready for Ctrl+C.
  for (const field of document.querySelectorAll('input[readonly], textarea[readonly]')) {
    field.addEventListener('focus', () => field.select());
  }

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (!window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      return;
    }
    if (!form.querySelector('input[name="confirmed"]')) {
      const confirmed = document.createElement('input');
      confirmed.type = 'hidden';
      confirmed.name = 'confirmed';
      confirmed.value = 'yes';
      form.append(confirmed);
    }
  });

  // After a failed submit, keyboard and screen-reader users start at the list of what to correct.
  const summary = document.querySelector('.error-summary[tabindex]');
  if (summary) summary.focus();
})();
