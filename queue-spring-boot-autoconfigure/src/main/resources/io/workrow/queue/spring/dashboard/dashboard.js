// The Workrow dashboard: reads <base>/api/overview every refresh interval and writes only through
// the workrow actuator endpoint (meta workrow-endpoint, empty when the page offers no writes).
// Every value from the server is placed with textContent, never parsed as HTML.
(() => {
  'use strict';
  const meta = name => document.querySelector(`meta[name="workrow-${name}"]`).content;
  const base = meta('base');
  const endpoint = meta('endpoint');
  const csrfHeader = meta('csrf-header');
  const csrfToken = meta('csrf-token');
  const $ = id => document.getElementById(id);
  let overview = null;
  let timer = null;
  let openJobId = null;

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([key, value]) => {
      if (value === null || value === undefined || value === false) return;
      if (key === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(key, value === true ? '' : String(value));
    });
    children.flat().forEach(child => {
      if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
    });
    return node;
  }

  function duration(millis) {
    if (millis === null || millis === undefined) return '';
    const seconds = Math.round(Math.abs(millis) / 1000);
    const sign = millis < 0 && seconds > 0 ? '-' : '';
    if (seconds < 60) return `${sign}${seconds} s`;
    if (seconds < 3600) return `${sign}${Math.floor(seconds / 60)} min ${seconds % 60} s`;
    return `${sign}${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  }

  function time(millis) {
    return millis === null || millis === undefined ? '' : new Date(millis).toLocaleString();
  }

  function ago(millis) {
    return millis === null || millis === undefined ? '' : `${duration(overview.now - millis)} ago`;
  }

  function sparkline(completed, dead) {
    const ns = 'http://www.w3.org/2000/svg';
    const width = 120, height = 24;
    const top = Math.max(1, ...completed, ...dead);
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    [['completed', completed], ['dead', dead]].forEach(([kind, series]) => {
      const line = document.createElementNS(ns, 'polyline');
      line.setAttribute('class', kind);
      line.setAttribute('points', series.map((value, i) =>
        `${(i * (width - 2) / (series.length - 1) + 1).toFixed(1)},${(height - 1 - value * (height - 2) / top).toFixed(1)}`).join(' '));
      svg.append(line);
    });
    const title = document.createElementNS(ns, 'title');
    const sum = series => series.reduce((a, b) => a + b, 0);
    title.textContent = `${sum(completed)} completed, ${sum(dead)} dead in the last hour`;
    svg.append(title);
    return svg;
  }

  // Every request gives up after a while, so a connection that never answers cannot stop the refreshes.
  // A write may move a whole group of dead jobs (a million is many batches on the server): it gets
  // longer than a read.
  const READ_TIMEOUT = 15000;
  const WRITE_TIMEOUT = 600000;
  function request(url, options, timeout) {
    return fetch(url, Object.assign({ credentials: 'same-origin', signal: AbortSignal.timeout(timeout || READ_TIMEOUT) },
      options));
  }

  function show(text, failed) {
    const message = $('message');
    message.textContent = text;
    message.classList.toggle('failed', !!failed);
    message.hidden = false;
  }

  async function write(queue, action, body, done) {
    const headers = { 'Content-Type': 'application/json', 'Accept': 'application/json' };
    if (csrfHeader && csrfToken) headers[csrfHeader] = csrfToken;
    show(`Working: ${action} on ${queue}…`);
    try {
      const response = await request(`${endpoint}/${encodeURIComponent(queue)}/${action}`,
        { method: 'POST', headers, body: JSON.stringify(body || {}) }, WRITE_TIMEOUT);
      if (!response.ok) {
        show(`Refused: ${action} on ${queue} answered HTTP ${response.status}.`, true);
      } else {
        show(done(await response.json()));
      }
    } catch (e) {
      show(`Failed: ${action} on ${queue}: ${e.message}`, true);
    }
    await refresh(true);
    if (openJobId !== null) await openJob(openJobId);
  }

  // A destructive button asks once more on itself rather than in a dialog. Which buttons wait for
  // their second click is kept by key, so a refresh that redraws the table keeps the question.
  const armed = new Map();
  function confirmButton(key, label, confirmLabel, attributes, action) {
    const button = el('button', Object.assign({ type: 'button', class: 'danger' }, attributes),
      armed.has(key) ? confirmLabel : label);
    button.addEventListener('click', () => {
      if (armed.has(key)) { clearTimeout(armed.get(key)); armed.delete(key); action(); return; }
      armed.set(key, setTimeout(() => {
        armed.delete(key);
        button.textContent = label;
        if (overview) render();
      }, 4000));
      button.textContent = confirmLabel;
    });
    return button;
  }

  function jobLink(id) {
    return el('a', { class: 'job', href: `#job=${id}`, 'data-job': id }, `#${id}`);
  }

  function renderQueues() {
    const body = $('queues').tBodies[0];
    body.replaceChildren(...overview.queues.map(queue => {
      const state = [];
      if (queue.paused) state.push(el('span', { class: 'badge paused' }, 'paused'));
      if (queue.breaker) state.push(el('span', { class: `badge ${queue.breaker.state}`, title: queue.breaker.reason || '' },
        `breaker ${queue.breaker.state.replace('_', '-')}`));
      if (queue.globalConcurrency) state.push(el('span', { class: 'badge', 'data-cap': queue.globalConcurrency,
        title: 'at most this many running at once on every node' }, `cap ${queue.globalConcurrency}`));
      if (queue.keyConcurrency) state.push(el('span', { class: 'badge', 'data-key-cap': queue.keyConcurrency,
        title: 'at most this many of one partition key running at once on every node' },
        `key cap ${queue.keyConcurrency}`));
      if (queue.hold) state.push(el('span', { class: 'badge held', 'data-hold': 'queue', title: queue.hold.reason || '' },
        `held until ${new Date(queue.hold.until).toLocaleTimeString()}`));
      if (queue.keysHeld > 0) state.push(el('span', { class: 'badge held', 'data-hold': 'keys' },
        `${queue.keysHeld} ${queue.keysHeld === 1 ? 'key' : 'keys'} held until ${new Date(queue.keysHeldUntil).toLocaleTimeString()}`));
      const actions = [];
      if (overview.writes.allowed) {
        actions.push(queue.paused
          ? el('button', { type: 'button', 'data-action': 'resume', onclick: () => write(queue.queue, 'resume', {},
            () => `Resumed ${queue.queue}.`) }, 'Resume')
          : el('button', { type: 'button', 'data-action': 'pause', onclick: () => write(queue.queue, 'pause',
            { reason: 'paused from the dashboard' }, () => `Paused ${queue.queue} on every node.`) }, 'Pause'));
        if (queue.hold) {
          actions.push(el('button', { type: 'button', 'data-action': 'release-hold', onclick: () =>
            write(queue.queue, 'release-hold', {}, () => `Released the hold of ${queue.queue}.`) }, 'Release hold'));
        }
        if (queue.breaker && queue.breaker.state !== 'closed') {
          actions.push(el('button', { type: 'button', 'data-action': 'close-breaker', onclick: () =>
            write(queue.queue, 'close-breaker', {}, () => `Closed the breaker of ${queue.queue}.`) }, 'Close breaker'));
        }
      }
      return el('tr', { 'data-queue': queue.queue },
        el('td', {}, queue.queue),
        el('td', { class: 'num' }, queue.pending),
        el('td', { class: 'num' }, queue.due),
        el('td', { class: 'num' }, queue.scheduled),
        el('td', { class: 'num' }, queue.waiting),
        el('td', { class: 'num' }, queue.running),
        el('td', { class: queue.dead > 0 ? 'num dead-count' : 'num' }, queue.dead),
        el('td', { class: 'num' }, queue.due > 0 ? duration(queue.oldestDueMillis) : ''),
        el('td', {}, sparkline(queue.completedPerMinute, queue.deadPerMinute), ' ',
          el('span', { class: 'muted' }, queue.completedPerMinute.reduce((a, b) => a + b, 0))),
        el('td', {}, state),
        el('td', { class: 'actions' }, actions));
    }));
    $('queues-empty').hidden = overview.queues.length > 0;
  }

  function renderDead() {
    // With more dead jobs than the server groups, a group's count is its share of the newest ones:
    // a lower bound, and the buttons act on the whole group.
    // A group counted 0 has only jobs older than those newest ones; without the queues' counts the
    // total is unknown, so counts are not claimed to be whole either.
    const dead = overview.queues.reduce((total, queue) => total + queue.dead, 0);
    const sampled = dead > overview.deadGroupSample || overview.deadGroups.some(group => group.jobs === 0)
      || overview.unavailable.some(part => part.startsWith('queues'));
    const body = $('dead').tBodies[0];
    body.replaceChildren(...overview.deadGroups.map(group => el('tr', { 'data-queue': group.queue, 'data-error': group.error },
      el('td', {}, group.queue),
      el('td', { class: 'error', title: group.example || '' }, group.error || '(no error)',
        group.example && group.example !== group.error ? el('div', { class: 'muted' }, group.example) : null),
      el('td', { class: 'num' }, group.jobs === 0 ? 'older' : sampled ? `≥ ${group.jobs}` : group.jobs),
      el('td', { title: time(group.lastDiedAt) }, ago(group.lastDiedAt)),
      el('td', {}, group.newestIds.map(jobLink)),
      el('td', { class: 'actions' }, overview.writes.allowed
        ? [el('button', { type: 'button', class: 'retry-group', onclick: () => write(group.queue, 'retry', { group: group.error },
          result => `Retried ${result.retried} dead job(s) of ${group.queue} (${group.error || 'no error'}).`) },
          sampled ? 'Retry all' : group.jobs > 1 ? `Retry all ${group.jobs}` : 'Retry'),
          confirmButton(`group:${group.queue}:${group.error}:${group.jobs}`,
            sampled ? 'Cancel all' : group.jobs > 1 ? `Cancel all ${group.jobs}` : 'Cancel',
            sampled ? 'Really cancel all?' : group.jobs > 1 ? `Really cancel ${group.jobs}?` : 'Really cancel?',
            { 'data-action': 'cancel-group' }, () => write(group.queue, 'cancel-dead', { group: group.error },
              result => `Cancelled ${result.cancelled} dead job(s) of ${group.queue} (${group.error || 'no error'}).`))]
        : null))));
    $('dead-empty').hidden = overview.deadGroups.length > 0;
    $('dead-sampled').hidden = !sampled;
    const older = overview.deadGroups.some(group => group.jobs === 0) ? ' "older": a kind none of them has.' : '';
    $('dead-sampled').textContent = sampled
      ? `Jobs are counted among the newest ${overview.deadGroupSample} dead jobs${dead > 0 ? ` of ${dead}` : ''}.`
        + `${older} Retry all and Cancel all act on the whole group.` : '';
  }

  function renderRunning() {
    const body = $('running').tBodies[0];
    body.replaceChildren(...overview.running.map(job => el('tr', { 'data-job': job.id },
      el('td', { class: 'num' }, jobLink(job.id)),
      el('td', {}, job.queue),
      el('td', { class: 'num' }, `${job.attempts}/${job.maxAttempts}`),
      el('td', {}, job.claimedBy || ''),
      el('td', {}, job.leaseExpiresAt === null ? '' : duration(job.leaseExpiresAt - overview.now)),
      el('td', { class: 'actions' }, overview.writes.allowed
        ? confirmButton(`running:${job.id}`, 'Cancel', 'Really cancel?', { 'data-action': 'cancel' }, () => write(job.queue, 'cancel', { id: job.id },
          result => result.cancelled ? `Cancelled job ${job.id}.` : `Job ${job.id} had already finished.`))
        : null))));
    $('running-empty').hidden = overview.running.length > 0;
  }

  function renderSettings() {
    $('recurring-section').hidden = overview.recurring.length === 0;
    $('recurring').tBodies[0].replaceChildren(...overview.recurring.map(job => el('tr', {},
      el('td', {}, job.name), el('td', {}, job.queue), el('td', { class: 'error' }, job.cron), el('td', {}, job.zone),
      el('td', {}, time(job.lastTick)), el('td', {}, time(job.nextTick)))));
    $('fairness-section').hidden = overview.fairness.length === 0;
    $('fairness').tBodies[0].replaceChildren(...overview.fairness.map(setting => el('tr', {},
      el('td', {}, setting.queue), el('td', {}, setting.key === '' ? '(no key)' : setting.key),
      el('td', { class: 'num' }, setting.weight ?? ''), el('td', { class: 'num' }, setting.ratePerMinute ?? ''))));
  }

  function pretty(json) {
    try { return JSON.stringify(JSON.parse(json), null, 2); } catch (e) { return json; }
  }

  async function openJob(id) {
    try {
      await showJob(id);
    } catch (e) {
      show(`Reading job ${id} failed: ${e.message}`, true);
    }
  }

  async function showJob(id) {
    const response = await request(`${base}/api/jobs/${encodeURIComponent(id)}`, { headers: { Accept: 'application/json' } });
    if (!response.ok) {
      show(response.status === 404 ? `No job ${id}.` : `Reading job ${id} answered HTTP ${response.status}.`, true);
      return;
    }
    const job = await response.json();
    $('job-id').textContent = `#${job.id}`;
    const rows = [
      ['Queue', job.queue], ['Status', job.status], ['Attempts', `${job.attempts}/${job.maxAttempts}`],
      ['Lease expiries', job.leaseExpiries], ['Priority', job.priority], ['Partition key', job.partitionKey],
      ['Fairness key', job.fairnessKey], ['Idempotency key', job.idempotencyKey], ['Run at', time(job.runAt)],
      ['Created', time(job.createdAt)], ['Started', time(job.startedAt)], ['Finished', time(job.finishedAt)],
      ['Updated', time(job.updatedAt)],
      ['Owner', job.claimedBy], ['Lease expires', time(job.leaseExpiresAt)], ['Last error', job.lastError],
      ['Last error at', time(job.lastErrorAt)]];
    const fields = rows.filter(([, value]) => value !== null && value !== undefined && value !== '')
      .flatMap(([name, value]) => [el('dt', {}, name), el('dd', { 'data-field': name }, value)]);
    if (job.payloadShown) {
      fields.push(el('dt', {}, 'Payload'), el('dd', { 'data-field': 'Payload' }, el('pre', {}, pretty(job.payload))));
      if (job.headers) fields.push(el('dt', {}, 'Headers'), el('dd', {}, el('pre', {}, pretty(job.headers))));
      if (job.step) fields.push(el('dt', {}, 'Saved step'), el('dd', {}, el('pre', {}, job.step)));
    } else {
      fields.push(el('dt', {}, 'Payload'), el('dd', { 'data-field': 'Payload', class: 'muted' },
        'withheld (workrow.dashboard.show-payloads is false)'));
    }
    const links = (list, more) => el('ul', { class: 'links' }, ...list.map(link => el('li', {},
      el('a', { href: `#job=${link.id}` }, `#${link.id}`), ` ${link.queue} `,
      el('span', { class: `badge ${link.status || 'gone'}` }, link.status || 'past retention'),
      link.settled ? el('span', { class: 'muted' }, ' (any end)') : '')),
      ...(more > list.length ? [el('li', { class: 'muted' }, `and ${more - list.length} more`)] : []));
    if (job.waitsFor && job.waitsFor.length > 0) {
      fields.push(el('dt', {}, 'Waits for'), el('dd', { 'data-field': 'Waits for' }, links(job.waitsFor, job.waitsFor.length)));
    }
    if (job.waitedOnBy && job.waitedOnBy.length > 0) {
      fields.push(el('dt', {}, 'Waited on by'),
        el('dd', { 'data-field': 'Waited on by' }, links(job.waitedOnBy, job.waitedOnByCount)));
    }
    $('job-fields').replaceChildren(...fields);
    const actions = [];
    if (overview && overview.writes.allowed) {
      if (job.status === 'dead') {
        actions.push(el('button', { type: 'button', 'data-action': 'retry', onclick: () => write(job.queue, 'retry', { ids: [job.id] },
          result => result.retried ? `Retried job ${job.id}.` : `Job ${job.id} was no longer dead.`) }, 'Retry'));
        actions.push(confirmButton(`dead:${job.id}`, 'Cancel', 'Really cancel?', { 'data-action': 'cancel-dead' },
          () => write(job.queue, 'cancel-dead', { ids: [job.id] },
            result => result.cancelled ? `Cancelled dead job ${job.id}.` : `Job ${job.id} was no longer dead.`)));
      }
      if (['pending', 'scheduled', 'waiting', 'running'].includes(job.status)) {
        actions.push(confirmButton(`job:${job.id}`, 'Cancel', 'Really cancel?', { 'data-action': 'cancel' }, () => write(job.queue, 'cancel', { id: job.id },
          result => result.cancelled ? `Cancelled job ${job.id}.` : `Job ${job.id} had already finished.`)));
      }
    }
    $('job-actions').replaceChildren(...actions);
    $('job').hidden = false;
    openJobId = job.id;
  }

  function openJobFromHash() {
    const match = /^#job=(\d+)$/.exec(location.hash);
    if (match) openJob(match[1]);
  }

  function render() {
    $('refreshed').textContent = `read ${new Date(overview.now).toLocaleTimeString()}`;
    const status = $('writes-status');
    status.hidden = overview.writes.allowed;
    status.textContent = overview.writes.reason || '';
    const unavailable = $('unavailable');
    unavailable.hidden = overview.unavailable.length === 0;
    unavailable.textContent = overview.unavailable.length === 0 ? ''
      : `Could not read ${overview.unavailable.join('; ')}. Shown empty; the rest is current.`;
    renderQueues();
    renderDead();
    renderRunning();
    renderSettings();
  }

  // Reads are numbered: a read that a later one overtook is dropped, and only the newest read
  // sets the next timer, so overlapping refreshes (a timer and a write) never start two chains.
  let reads = 0;
  // Open pages share the server's last read for a moment; after a write of its own the page asks
  // for a fresh one, which must show the write.
  async function refresh(fresh) {
    const read = ++reads;
    clearTimeout(timer);
    try {
      const response = await request(`${base}/api/overview${fresh ? '?fresh=true' : ''}`,
        { headers: { Accept: 'application/json' } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const answer = await response.json();
      if (read !== reads) return;
      overview = answer;
      render();
      document.body.dataset.loaded = 'true';
      document.body.dataset.rendered = String(read);
    } catch (e) {
      if (read !== reads) return;
      $('refreshed').textContent = `reading failed (${e.message}); trying again`;
    }
    clearTimeout(timer);
    timer = setTimeout(refresh, overview ? overview.refreshMillis : 5000);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('refresh-now').addEventListener('click', () => refresh(true));
    $('job-close').addEventListener('click', () => { $('job').hidden = true; openJobId = null; history.replaceState(null, '', location.pathname); });
    window.addEventListener('hashchange', openJobFromHash);
    refresh().then(openJobFromHash);
  });
})();
