import './base.css';
import './notebook.css';
import './table.css';
import './cards.css';
import './receipts.css';
import './proposals.css';
